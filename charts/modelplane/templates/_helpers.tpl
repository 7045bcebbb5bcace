{{/* Shared names and labels; every template uses these so names never drift. */}}
{{- define "modelplane.fullname" -}}
{{- printf "%s-modelplane" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* <release>-modelplane-<component>; call with (dict "root" . "component" "operator"). */}}
{{- define "modelplane.componentName" -}}
{{- printf "%s-%s" (include "modelplane.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "modelplane.operatorName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "operator") -}}
{{- end -}}
{{- define "modelplane.extenderName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "extender") -}}
{{- end -}}
{{- define "modelplane.schedulerName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "scheduler") -}}
{{- end -}}
{{- define "modelplane.nodeAgentName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "node-agent") -}}
{{- end -}}

{{/* The ServiceAccount of a component: (dict "root" . "component" "operator" "values" .Values.operator). */}}
{{- define "modelplane.serviceAccountName" -}}
{{- default (include "modelplane.componentName" (dict "root" .root "component" .component)) .values.serviceAccount.name -}}
{{- end -}}

{{- define "modelplane.labels" -}}
app.kubernetes.io/name: modelplane
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: modelplane
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" . "component" "operator"). */}}
{{- define "modelplane.selectorLabels" -}}
app.kubernetes.io/name: modelplane
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "modelplane.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.repository .binary (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{/* The container security context every modelplane binary runs with. */}}
{{- define "modelplane.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The extender's in-cluster URL prefix, which the second scheduler calls. */}}
{{- define "modelplane.extenderUrlPrefix" -}}
{{- printf "%s://%s.%s.svc:%d%s" (ternary "https" "http" .Values.extender.tls.enabled) (include "modelplane.extenderName" .) .Release.Namespace (int .Values.extender.port) .Values.extender.pathPrefix -}}
{{- end -}}

{{/* Mutual TLS between the second scheduler and the extender (templates/extender-tls.yaml). */}}
{{- define "modelplane.peerCaSecretName" -}}
{{- default (printf "%s-peer-ca" (include "modelplane.fullname" .)) .Values.nodeAgent.peerCertificates.caSecret -}}
{{- end -}}
{{- define "modelplane.peerCertificatesEnabled" -}}
{{- if and .Values.nodeAgent.enabled .Values.nodeAgent.peerCertificates.enabled }}true{{ end -}}
{{- end -}}
{{- define "modelplane.extenderTlsSecretName" -}}
{{- printf "%s-tls" (include "modelplane.extenderName" .) -}}
{{- end -}}
{{- define "modelplane.schedulerClientSecretName" -}}
{{- printf "%s-extender-client" (include "modelplane.schedulerName" .) -}}
{{- end -}}
{{/* The common name of the scheduler's client certificate; the extender accepts only it. */}}
{{- define "modelplane.schedulerClientName" -}}
{{- include "modelplane.schedulerName" . -}}
{{- end -}}

{{/* The admission webhook: configuration, Service and certificate Secret. */}}
{{- define "modelplane.webhookName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "webhook") -}}
{{- end -}}
{{- define "modelplane.webhookServiceName" -}}
{{- include "modelplane.componentName" (dict "root" . "component" "webhook") -}}
{{- end -}}
{{- define "modelplane.webhookSecretName" -}}
{{- default (printf "%s-tls" (include "modelplane.webhookName" .)) .Values.operator.webhook.certificate.secretName -}}
{{- end -}}

{{/* The ConfigMap with the operator's CA (ca.crt) the agents verify its credentials endpoint
with. */}}
{{- define "modelplane.operatorCaConfigMap" -}}
{{- default (printf "%s-ca" (include "modelplane.webhookName" .)) .Values.operator.credentials.caConfigMap -}}
{{- end -}}
{{/* Whether the operator serves the agents' credentials (it needs the webhook's TLS server). */}}
{{- define "modelplane.credentialsEnabled" -}}
{{- if and .Values.operator.credentials.enabled .Values.operator.webhook.enabled }}true{{ end -}}
{{- end -}}

{{/* The source policy, as the operator and every agent read it (a YAML mapping). */}}
{{- define "modelplane.sourcePolicy" -}}
credentialsNamespace: {{ .Release.Namespace | quote }}
sharedFilesystems: {{ toJson .Values.sourcePolicy.sharedFilesystems }}
objectStores: {{ toJson .Values.sourcePolicy.objectStores }}
httpOrigins: {{ toJson .Values.sourcePolicy.httpOrigins }}
hubs: {{ toJson (.Values.sourcePolicy.hubs | default list) }}
credentials: {{ toJson .Values.sourcePolicy.credentials }}
signatures: {{ toJson (.Values.sourcePolicy.signatures | default dict) }}
{{- end }}
