{{/*
The two processes' containers, shared by their own Deployments (the default
install) and by the one Deployment of the Kueue-compatible install
(deployment-controller-manager.yaml), so both run them alike.
(dict "root" $ "name" "webhook"): the webhook container, named "name"; with
"metricsPort", the name of its metrics port (in one pod with the scheduler, whose
metrics port is "metrics", a Service must tell the two apart).
*/}}
{{- define "kuota.webhookContainer" -}}
{{- $root := .root -}}
{{- $w := $root.Values.webhook -}}
- name: {{ .name }}
  image: {{ include "kuota.image" $root }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command: ["kuota-webhook"]
  args:
  - --host=0.0.0.0
  - --port={{ $w.port }}
  - --probe-port={{ $w.probePort }}
  {{- include "kuota.metricsArgs" (dict "root" $root "component" "webhook") | nindent 2 }}
  - --cert-dir=/etc/kuota/certs
  # The Secret may appear after the pod (self-managed or cert-manager issuance).
  - --cert-wait=300
  - --config=/etc/kuota/config/controller_manager_config.yaml
  - --kuota-namespace={{ $root.Release.Namespace }}
  - --scheduler-identity={{ include "kuota.schedulerIdentity" $root }}
  {{- range $w.extraSchedulerIdentities }}
  - --scheduler-identity={{ . }}
  {{- end }}
  - --lookup-timeout={{ $w.lookupTimeoutSeconds }}
  {{- if $root.Values.multikueue.enabled }}
  - --multikueue-managed-by
  {{- end }}
  - --max-connections={{ $w.maxConnections }}
  - --idle-timeout={{ $w.idleTimeoutSeconds }}
  - --tls-handshake-timeout={{ $w.tlsHandshakeTimeoutSeconds }}
  - --log-level={{ $w.logLevel }}
  env:
  - name: PYTHONDONTWRITEBYTECODE
    value: "1"
  ports:
  - name: https
    containerPort: {{ $w.port }}
    protocol: TCP
  - name: probes
    containerPort: {{ $w.probePort }}
    protocol: TCP
  - name: {{ .metricsPort | default "metrics" }}
    containerPort: {{ $w.metricsPort }}
    protocol: TCP
  livenessProbe:
    httpGet:
      path: /healthz
      port: probes
    initialDelaySeconds: 10
    periodSeconds: 20
  readinessProbe:
    httpGet:
      path: /readyz
      port: probes
    periodSeconds: 5
  securityContext: {{- toYaml $root.Values.containerSecurityContext | nindent 4 }}
  resources: {{- toYaml $w.resources | nindent 4 }}
  volumeMounts:
  - name: certs
    mountPath: /etc/kuota/certs
    readOnly: true
  - name: config
    mountPath: /etc/kuota/config
    readOnly: true
  - name: tmp
    mountPath: /tmp
  {{- include "kuota.metricsVolumeMount" $root | nindent 2 }}
{{- end -}}

{{/*
(dict "root" $ "name" "scheduler" "tmp" "tmp"): the scheduler container, named
"name", its /tmp from the volume named "tmp".
*/}}
{{- define "kuota.schedulerContainer" -}}
{{- $root := .root -}}
{{- $s := $root.Values.scheduler -}}
- name: {{ .name }}
  image: {{ include "kuota.image" $root }}
  imagePullPolicy: {{ $root.Values.image.pullPolicy }}
  command: ["kuota-scheduler"]
  args:
  - --config=/etc/kuota/controller_manager_config.yaml
  {{- if $s.leaderElection.enabled }}
  - --leader-elect
  - --lease-namespace={{ $root.Release.Namespace }}
  - --lease-name={{ include "kuota.leaseName" $root }}
  - --lease-duration={{ $s.leaderElection.leaseDuration }}
  - --renew-deadline={{ $s.leaderElection.renewDeadline }}
  - --retry-period={{ $s.leaderElection.retryPeriod }}
  - --identity=$(POD_NAME)
  - --owner-deployment={{ include "kuota.schedulerDeploymentName" $root }}
  {{- else }}
  - --no-leader-elect
  {{- end }}
  - --health-probe-bind-address=0.0.0.0:{{ $s.healthPort }}
  {{- include "kuota.metricsArgs" (dict "root" $root "component" "scheduler") | nindent 2 }}
  - --status-writes-per-second={{ $s.statusWritesPerSecond }}
  - --log-level={{ $s.logLevel }}
  {{- if include "kuota.visibilityCertificate" $root }}
  - --visibility-cert-dir=/etc/kuota/visibility-certs
  {{- end }}
  env:
  - name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  - name: PYTHONDONTWRITEBYTECODE
    value: "1"
  ports:
  - name: probes
    containerPort: {{ $s.healthPort }}
    protocol: TCP
  - name: metrics
    containerPort: {{ $s.metricsPort }}
    protocol: TCP
  {{- if include "kuota.visibilityEnabled" $root }}
  # The visibility API, on the Configuration's visibilityServer.bindPort (8082 by default).
  - name: visibility
    containerPort: 8082
    protocol: TCP
  {{- end }}
  livenessProbe:
    httpGet:
      path: /healthz
      port: probes
    initialDelaySeconds: 15
    periodSeconds: 20
  readinessProbe:
    httpGet:
      path: /readyz
      port: probes
    periodSeconds: 10
  securityContext: {{- toYaml $root.Values.containerSecurityContext | nindent 4 }}
  resources: {{- toYaml $s.resources | nindent 4 }}
  volumeMounts:
  - name: config
    mountPath: /etc/kuota
    readOnly: true
  - name: {{ .tmp }}
    mountPath: /tmp
  {{- if include "kuota.visibilityCertificate" $root }}
  - name: {{ .certs | default "visibility-certs" }}
    mountPath: /etc/kuota/visibility-certs
    readOnly: true
  {{- end }}
  {{- include "kuota.metricsVolumeMount" $root | nindent 2 }}
{{- end -}}
