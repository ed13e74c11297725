{{/*
The visibility API (visibility.kueue.x-k8s.io): served by every scheduler pod
(scheduler/visibility, docs/visibility.md), registered by two APIServices
through one Service. On unless config.featureGates.VisibilityOnDemand is
false, as in Kueue. In the Kueue-compatible install (kueueCompatible) the
scheduler runs in Kueue's controller-manager pods and the Service has
Kueue's name, kueue-visibility-server.
*/}}
{{- define "kuota.visibilityEnabled" -}}
{{- $gates := .Values.config.featureGates | default dict -}}
{{- if ne (toString (get $gates "VisibilityOnDemand")) "false" -}}true{{- end -}}
{{- end -}}

{{- define "kuota.visibilityServiceName" -}}
{{- if .Values.kueueCompatible -}}kueue-visibility-server{{- else -}}{{ include "kuota.fullname" . }}-visibility{{- end -}}
{{- end -}}

{{/* The pods that serve it: the scheduler's component. */}}
{{- define "kuota.visibilityComponent" -}}
{{- if .Values.kueueCompatible -}}controller-manager{{- else -}}scheduler{{- end -}}
{{- end -}}

{{/* Prefix of the user-facing ClusterRoles (rbac-user-roles.yaml). */}}
{{- define "kuota.userRolePrefix" -}}
{{- if .Values.kueueCompatible -}}kueue{{- else -}}{{ include "kuota.fullname" . }}{{- end -}}
{{- end -}}

{{- define "kuota.visibilityServiceAccount" -}}
{{- if .Values.kueueCompatible -}}kueue-controller-manager{{- else -}}{{ include "kuota.schedulerName" . }}{{- end -}}
{{- end -}}

{{/*
The serving certificate comes from kuota's certificate Secret (the webhook's,
with the visibility Service's names added) when the chart makes one; without
it the scheduler makes a self-signed pair and the APIServices skip verification.
*/}}
{{- define "kuota.visibilityCertificate" -}}
{{- if and .Values.webhook.enabled (ne (include "kuota.certMode" .) "external") -}}true{{- end -}}
{{- end -}}

{{/* DNS names the serving certificate needs for the aggregator: <service>.<namespace>.svc. */}}
{{- define "kuota.visibilityDnsNames" -}}
{{- if include "kuota.visibilityEnabled" . }}
- {{ include "kuota.visibilityServiceName" . }}.{{ .Release.Namespace }}.svc
- {{ include "kuota.visibilityServiceName" . }}.{{ .Release.Namespace }}.svc.cluster.local
{{- end }}
{{- end -}}

{{/* The rules of one entry of rbac-user-roles.yaml's table (list name group resource . . kind). */}}
{{- define "kuota.userRoleRules" -}}
{{- $group := index . 1 }}
{{- $resource := index . 2 }}
{{- $kind := index . 5 }}
- apiGroups: [{{ $group | quote }}]
  resources: [{{ $resource | quote }}]
  {{- if eq $kind "edit" }}
  verbs: [create, delete, get, list, patch, update, watch]
  {{- else }}
  verbs: [get, list, watch]
  {{- end }}
{{- if ne $kind "pending" }}
- apiGroups: [{{ $group | quote }}]
  resources: [{{ printf "%s/status" $resource | quote }}]
  verbs: [get]
{{- end }}
{{- end -}}
