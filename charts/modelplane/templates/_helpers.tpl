{{/* Shared names and labels; every template uses these so names never drift. */}}
{{- define "modelplane.fullname" -}}
{{- printf "%s-modelplane" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "modelplane.operatorName" -}}
{{- printf "%s-operator" (include "modelplane.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "modelplane.serviceAccountName" -}}
{{- default (include "modelplane.operatorName" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "modelplane.labels" -}}
app.kubernetes.io/name: modelplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "modelplane.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.repository .binary (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}
