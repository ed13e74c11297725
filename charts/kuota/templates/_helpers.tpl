{{/* Names, labels and the pieces shared by several templates. */}}

{{- define "kuota.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kuota.fullname" -}}
{{- if .Values.kueueCompatible -}}
kueue
{{- else if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kuota.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "kuota.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "scheduler"). */}}
{{- define "kuota.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kuota.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "kuota.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "kuota.schedulerName" -}}{{ include "kuota.fullname" . }}-scheduler{{- end -}}
{{- define "kuota.multikueueName" -}}{{ include "kuota.fullname" . }}-multikueue{{- end -}}
{{- define "kuota.dashboardName" -}}{{ include "kuota.fullname" . }}-dashboard{{- end -}}
{{- define "kuota.webhookName" -}}{{ include "kuota.fullname" . }}-webhook{{- end -}}
{{- define "kuota.certBootstrapName" -}}{{ include "kuota.fullname" . }}-cert-bootstrap{{- end -}}
{{- define "kuota.webhookServiceName" -}}{{ include "kuota.fullname" . }}-webhook-service{{- end -}}
{{- define "kuota.certSecretName" -}}{{ include "kuota.fullname" . }}-webhook-server-cert{{- end -}}
{{- define "kuota.configName" -}}
{{- if .Values.kueueCompatible -}}kueue-manager-config{{- else -}}{{ include "kuota.fullname" . }}-config{{- end -}}
{{- end -}}
{{- define "kuota.schedulerIdentity" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "kuota.schedulerServiceAccount" . }}{{- end -}}

{{/*
The Kueue-compatible install (kueueCompatible=true): one Deployment under Kueue's
name whose pods run the webhook (container "manager", as Kueue's) and the
scheduler (container "scheduler"), with one ServiceAccount, Kueue's leader
Lease and Kueue's Service, ConfigMap and webhook configuration names. The
names below are the ones each template asks for; the default install keeps
its two Deployments and their ServiceAccounts.
*/}}
{{- define "kuota.controllerManagerName" -}}kueue-controller-manager{{- end -}}
{{- define "kuota.schedulerDeploymentName" -}}
{{- if .Values.kueueCompatible -}}{{ include "kuota.controllerManagerName" . }}{{- else -}}{{ include "kuota.schedulerName" . }}{{- end -}}
{{- end -}}
{{- define "kuota.schedulerServiceAccount" -}}
{{- if .Values.kueueCompatible -}}{{ include "kuota.controllerManagerName" . }}{{- else -}}{{ include "kuota.schedulerName" . }}{{- end -}}
{{- end -}}
{{- define "kuota.webhookServiceAccount" -}}
{{- if .Values.kueueCompatible -}}{{ include "kuota.controllerManagerName" . }}{{- else -}}{{ include "kuota.webhookName" . }}{{- end -}}
{{- end -}}
{{/* Kueue's leader-election ID (configapi.DefaultLeaderElectionID). */}}
{{- define "kuota.leaseName" -}}
{{- if .Values.kueueCompatible -}}c1f6bfd2.kueue.x-k8s.io{{- else -}}{{ include "kuota.schedulerName" . }}{{- end -}}
{{- end -}}
{{/* The component label of the pods that serve the webhook (its Service's selector). */}}
{{- define "kuota.webhookComponent" -}}
{{- if .Values.kueueCompatible -}}controller-manager{{- else -}}webhook{{- end -}}
{{- end -}}

{{/*
Certificate mode: "external" (webhook.externalURL + webhook.caBundle),
"cert-manager", or "bootstrap" (kuota's `python -m certs bootstrap`).
*/}}
{{- define "kuota.certMode" -}}
{{- if .Values.webhook.externalURL -}}external
{{- else if .Values.certManager.enabled -}}cert-manager
{{- else -}}bootstrap
{{- end -}}
{{- end -}}

{{/* Refusals that the schema cannot express; included by every Deployment template. */}}
{{- define "kuota.validate" -}}
{{- $mode := include "kuota.certMode" . -}}
{{- if and (eq $mode "external") (not .Values.webhook.caBundle) -}}
{{- fail "webhook.externalURL needs webhook.caBundle: the base64 PEM CA that signs the certificate served at that URL" -}}
{{- end -}}
{{- with .Values.managerConfig.controllerManagerConfigYaml -}}
{{- $given := fromYaml . -}}
{{- if $given.Error -}}
{{- fail (printf "managerConfig.controllerManagerConfigYaml is not YAML: %s" $given.Error) -}}
{{- end -}}
{{- if ne ($given.kind | default "") "Configuration" -}}
{{- fail "managerConfig.controllerManagerConfigYaml must be a config.kueue.x-k8s.io Configuration (kind: Configuration)" -}}
{{- end -}}
{{- end -}}
{{- if and (gt (int .Values.scheduler.replicas) 1) (not .Values.scheduler.leaderElection.enabled) -}}
{{- fail "scheduler.replicas > 1 needs scheduler.leaderElection.enabled=true: two leaders would both write" -}}
{{- end -}}
{{- if and .Values.kueueCompatible (not .Values.webhook.enabled) -}}
{{- fail "kueueCompatible needs webhook.enabled=true: Kueue's controller manager serves the webhooks" -}}
{{- end -}}
{{- if and .Values.kueueCompatible (gt (int .Values.webhook.replicas) 1) (not .Values.scheduler.leaderElection.enabled) -}}
{{- fail "kueueCompatible with webhook.replicas > 1 needs scheduler.leaderElection.enabled=true: each pod runs a scheduler" -}}
{{- end -}}
{{- end -}}

{{/*
Name prefix of the two webhook configurations. `python -m certs bootstrap`
injects the CA bundle into kuota-mutating/validating-webhook-configuration
(certs/bootstrap.py), so the self-managed mode keeps exactly those names
(one kuota per cluster, as its CRDs are anyway); the other modes follow the
release's full name. The Kueue-compatible install uses Kueue's names,
kueue-mutating/validating-webhook-configuration (its bootstrap is told so).
*/}}
{{- define "kuota.webhookConfigurationPrefix" -}}
{{- if .Values.kueueCompatible -}}kueue
{{- else if eq (include "kuota.certMode" .) "bootstrap" -}}kuota
{{- else -}}{{ include "kuota.fullname" . }}{{- end -}}
{{- end -}}

{{/* clientConfig of one webhook entry: (dict "root" $ "path" "/convert"). */}}
{{- define "kuota.webhookClientConfig" -}}
{{- $root := .root -}}
{{- if $root.Values.webhook.externalURL -}}
url: {{ printf "%s%s" (trimSuffix "/" $root.Values.webhook.externalURL) .path }}
caBundle: {{ $root.Values.webhook.caBundle }}
{{- else -}}
service:
  name: {{ include "kuota.webhookServiceName" $root }}
  namespace: {{ $root.Release.Namespace }}
  path: {{ .path }}
  port: 443
{{- end -}}
{{- end -}}

{{/*
The two job-management fields of the Configuration the processes read (YAML):
from managerConfig.controllerManagerConfigYaml when it is set, else from the
config values, so the webhook registrations agree with the file.
*/}}
{{- define "kuota.jobManagement" -}}
{{- $c := .Values.config -}}
{{- with .Values.managerConfig.controllerManagerConfigYaml -}}
{{- $c = fromYaml . -}}
{{- end -}}
manageJobsWithoutQueueName: {{ $c.manageJobsWithoutQueueName | default false }}
managedJobsNamespaceSelector: {{- $c.managedJobsNamespaceSelector | default dict | toYaml | nindent 2 }}
{{- end -}}

{{- define "kuota.manageJobsWithoutQueueName" -}}
{{- (include "kuota.jobManagement" . | fromYaml).manageJobsWithoutQueueName -}}
{{- end -}}

{{/*
The managed-namespace rule as a namespaceSelector, on every Job entry of the
webhook configurations (scheduler/jobs/managed_namespaces.py,
ManagedNamespaces.registration_selector): never kube-system or the release
namespace, AND the Configuration's managedJobsNamespaceSelector.
*/}}
{{- define "kuota.managedJobsNamespaceSelector" -}}
{{- $managed := (include "kuota.jobManagement" . | fromYaml).managedJobsNamespaceSelector | default dict -}}
{{- $labels := $managed.matchLabels | default dict -}}
{{- if $labels }}
matchLabels: {{- toYaml $labels | nindent 2 }}
{{- end }}
matchExpressions:
- key: kubernetes.io/metadata.name
  operator: NotIn
  values: {{- list "kube-system" .Release.Namespace | uniq | sortAlpha | toYaml | nindent 2 }}
{{- with $managed.matchExpressions }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* cert-manager's cainjector reads this annotation on webhook configurations and CRDs. */}}
{{- define "kuota.caInjectionAnnotations" -}}
{{- if eq (include "kuota.certMode" .) "cert-manager" -}}
cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "kuota.fullname" . }}-webhook-cert
{{- end -}}
{{- end -}}

{{- define "kuota.crdAnnotations" -}}
{{- if .Values.crds.keep }}
helm.sh/resource-policy: keep
{{- end }}
{{- with (include "kuota.caInjectionAnnotations" .) }}
{{ . }}
{{- end }}
{{- end -}}

{{/* A CRD's spec.conversion: by kuota's webhook when it is installed. */}}
{{- define "kuota.crdConversion" -}}
{{- if .Values.webhook.enabled -}}
strategy: Webhook
webhook:
  clientConfig: {{- include "kuota.webhookClientConfig" (dict "root" . "path" "/convert") | nindent 4 }}
  conversionReviewVersions:
  - v1
{{- else -}}
strategy: None
{{- end -}}
{{- end -}}

{{/* The pod-level security context (restricted Pod Security Standard). */}}
{{- define "kuota.podSecurityContext" -}}
{{ toYaml .Values.podSecurityContext }}
{{- end -}}

{{/*
The components that serve /metrics, and the names of their metrics Services
(templates/metrics.yaml). kuota's serving certificate names these Services
too, so Prometheus can verify them against kuota's CA.
*/}}
{{- define "kuota.metricsComponents" -}}
scheduler{{ if .Values.webhook.enabled }} webhook{{ end }}{{ if .Values.multikueue.enabled }} multikueue{{ end }}
{{- end -}}
{{- define "kuota.metricsServiceName" -}}
{{- if and .root.Values.kueueCompatible (eq .component "scheduler") -}}
{{ include "kuota.controllerManagerName" .root }}-metrics-service
{{- else -}}
{{ include "kuota.fullname" .root }}-{{ .component }}-metrics
{{- end -}}
{{- end -}}
{{- define "kuota.metricsPort" -}}
{{- if eq .component "scheduler" }}{{ .root.Values.scheduler.metricsPort }}
{{- else if eq .component "webhook" }}{{ .root.Values.webhook.metricsPort }}
{{- else }}{{ .root.Values.multikueue.metricsPort }}{{ end -}}
{{- end -}}
{{- define "kuota.metricsDnsNames" -}}
{{- range $component := splitList " " (include "kuota.metricsComponents" .) }}
- {{ include "kuota.metricsServiceName" (dict "root" $ "component" $component) }}.{{ $.Release.Namespace }}.svc
{{- end }}
{{- if .Values.dashboard.enabled }}
- {{ include "kuota.dashboardName" . }}.{{ .Release.Namespace }}.svc
{{- end }}
{{- end -}}

{{/*
Where a process finds the pair it serves /metrics with: kuota's certificate
Secret (self-managed or cert-manager), mounted at /etc/kuota/metrics-certs;
none with webhook.externalURL or without the webhook (no such Secret: the
process then makes a self-signed pair).
*/}}
{{- define "kuota.metricsTLS" -}}
{{- and .Values.webhook.enabled (ne (include "kuota.certMode" .) "external") -}}
{{- end -}}
{{- define "kuota.metricsArgs" -}}
- --metrics-bind-address=0.0.0.0:{{ include "kuota.metricsPort" . }}
{{- if eq (include "kuota.metricsTLS" .root) "true" }}
- --metrics-cert-dir=/etc/kuota/metrics-certs
{{- end }}
{{- end -}}
{{- define "kuota.metricsVolumeMount" -}}
{{- if eq (include "kuota.metricsTLS" .) "true" }}
- name: metrics-certs
  mountPath: /etc/kuota/metrics-certs
  readOnly: true
{{- end }}
{{- end -}}
{{- define "kuota.metricsVolume" -}}
{{- if eq (include "kuota.metricsTLS" .) "true" }}
- name: metrics-certs
  secret:
    secretName: {{ include "kuota.certSecretName" . }}
    # Written by the certificate issuer, maybe after the pod starts: /metrics
    # opens once the pair is there (the rest of the process does not wait).
    optional: true
{{- end }}
{{- end -}}
{{- define "kuota.metricsAccessRules" -}}
- apiGroups: ["authentication.k8s.io"]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: ["authorization.k8s.io"]
  resources: [subjectaccessreviews]
  verbs: [create]
{{- end -}}
