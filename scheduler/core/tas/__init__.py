"""Topology-aware scheduling: domains from node labels, and where a pod set's pods go.

See docs/concepts.md#topology-aware-scheduling.  Pure, like the rest of the
core: ``request`` reads a pod set's topology request, ``tree`` builds a
flavor's domains from its nodes, ``placement`` runs the placement algorithm,
``cache`` keeps nodes, pods and Topologies, ``held`` what admitted
placements hold, and ``flavor_fit`` decides what a workload's pod sets get in a
ClusterQueue's TAS flavors.
"""
