{{/*
Names, labels and the operator's permissions, defined once for every template.
*/}}

{{- define "segue.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: every object's name, and the leader-election Lease's. */}}
{{- define "segue.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "segue.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "segue.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The recommended labels, on every object. */}}
{{- define "segue.labels" -}}
helm.sh/chart: {{ include "segue.chart" . }}
{{ include "segue.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* What picks the operator's pods: never changes across upgrades. */}}
{{- define "segue.selectorLabels" -}}
app.kubernetes.io/name: {{ include "segue.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "segue.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "segue.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "segue.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* The leader-election Lease: one per release, in the release's namespace. */}}
{{- define "segue.leaseName" -}}
{{- include "segue.fullname" . -}}
{{- end -}}

{{/*
What the operator does in every namespace it watches (docs/install.md, "Permissions",
says why each is needed). One list: the ClusterRole (cluster mode) and each
namespace's Role (namespaced mode) both render it, so the two modes cannot drift.
Never escalate or bind: the operator grants its workers only rights it holds itself.
*/}}
{{- define "segue.rules" -}}
- apiGroups: ["segue.dev"]
  resources: ["streamapps"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["segue.dev"]
  resources: ["streamapps/status"]
  verbs: ["get", "patch"]
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "create", "delete"]
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "create", "delete"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["get", "create", "patch"]
- apiGroups: ["rbac.authorization.k8s.io"]
  resources: ["roles", "rolebindings"]
  verbs: ["get", "create", "patch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["get", "create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}

{{/* Cluster-wide and read-only, in both modes: Kopf discovers its resource through the CRD. */}}
{{- define "segue.discoveryRules" -}}
- apiGroups: ["apiextensions.k8s.io"]
  resources: ["customresourcedefinitions"]
  verbs: ["get", "list", "watch"]
{{- end -}}

{{/* The leader-election Lease, in the release's namespace; create cannot be limited by name. */}}
{{- define "segue.leaseRules" -}}
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ include "segue.leaseName" . | quote }}]
  verbs: ["get", "update"]
{{- end -}}

{{/* The external metrics API's Service and Secret. */}}
{{- define "segue.externalMetricsName" -}}
{{- printf "%s-external-metrics" (include "segue.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Where the operator finds that Secret's serving certificate. */}}
{{- define "segue.externalMetricsDir" -}}
/var/run/segue/external-metrics
{{- end -}}

{{/* The binding's subject: the operator's ServiceAccount. */}}
{{- define "segue.subjects" -}}
- kind: ServiceAccount
  name: {{ include "segue.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/*
The operator's arguments after the command: one per `segue operator` flag, so every
setting is a value (tests/chart/test_flags.py checks none is missing). $(VAR) is
expanded by the kubelet from the container's env.
*/}}
{{- define "segue.args" -}}
{{- $s := .Values.settings -}}
{{- $le := .Values.leaderElection -}}
- operator
- --bind-address=$(POD_IP)
- --metrics-port={{ .Values.metrics.port }}
- --health-port={{ .Values.health.port }}
{{- if .Values.externalMetrics.enabled }}
- --external-metrics-port={{ .Values.externalMetrics.port }}
- --tls-cert-file={{ include "segue.externalMetricsDir" . }}/tls.crt
- --tls-private-key-file={{ include "segue.externalMetricsDir" . }}/tls.key
{{- else }}
- --external-metrics-port=0
{{- end }}
- --busy-interval={{ $s.busyInterval }}
- --idle-interval={{ $s.idleInterval }}
- --error-backoff={{ $s.errorBackoff }}
- --scrape-timeout={{ $s.scrapeTimeout }}
- --kafka-timeout={{ $s.kafkaTimeout }}
- --scrape-workers={{ $s.scrapeWorkers }}
- --step-workers={{ $s.stepWorkers }}
- --routine-looks={{ $s.routineLooks }}
- --log-level={{ .Values.logLevel }}
- --log-format={{ .Values.logFormat }}
- --history-topic={{ .Values.history.topic }}
- --kstreams-agent-image={{ include "segue.image" . }}
{{- if $le.enabled }}
- --leader-elect
- --lease-name={{ include "segue.leaseName" . }}
- --lease-namespace=$(POD_NAMESPACE)
- --lease-duration={{ $le.leaseDuration }}
- --renew-deadline={{ $le.renewDeadline }}
- --retry-period={{ $le.retryPeriod }}
- --identity=$(POD_NAME)
{{- else }}
- --no-leader-elect
{{- end }}
{{- range .Values.watchNamespaces }}
- --namespace={{ . }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
