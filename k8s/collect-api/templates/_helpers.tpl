{{- define "collect-api.fullname" -}}
{{- default .Release.Name .Values.collectApi.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "collect-api.labels" -}}
app.kubernetes.io/name: collect-api
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "collect-api.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: collect-platform
collect-platform/environment: {{ .Values.global.environment | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "collect-api.selector" -}}
app.kubernetes.io/name: collect-api
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "collect-api.tag" -}}
{{- $tag := toString (default .Values.global.imageTag .Values.collectApi.image.tag) -}}
{{- if or (not $tag) (eq $tag "<nil>") -}}{{- fail "global.imageTag (or collectApi.image.tag) is required" -}}{{- end -}}
{{- if eq $tag "latest" -}}{{- fail "image tag `latest` is refused: deploy a built tag" -}}{{- end -}}
{{- $tag -}}
{{- end -}}

{{- define "collect-api.image" -}}
{{- $repo := default (printf "%s/collect-api" .Values.global.imageRegistry) .Values.collectApi.image.repository -}}
{{- printf "%s:%s" $repo (include "collect-api.tag" .) -}}
{{- end -}}

{{/* Non-secret environment shared by the ConfigMap (Deployments) and the migrate Job (inline,
     because a pre-install hook runs before the ConfigMap exists). */}}
{{- define "collect-api.config" -}}
{{- $v := .Values.collectApi -}}
{{- range $name, $_ := $v.env -}}
{{- if has $name $v.secretNames -}}{{- fail (printf "collectApi.env.%s holds a secret: list it in collectApi.secret instead" $name) -}}{{- end -}}
{{- end -}}
{{- $cfg := dict "COLLECT_PORT" "3000" "COLLECT_HOST" "0.0.0.0" "PUBLIC_BASE_URL" $v.publicBaseUrl -}}
{{- /* The service's own default issuer is http://localhost:4000: in production that would trust
       whatever answers on the pod's port 4000 (docs/security.md). */ -}}
{{- if and (not .Values.global.casIssuer) (or (eq (toString $v.env.NODE_ENV) "production") (eq .Values.global.environment "production")) -}}
{{- fail "global.casIssuer is required when NODE_ENV or global.environment is production (the public CAS issuer URL)" -}}
{{- end -}}
{{- if .Values.global.casIssuer -}}{{- $_ := set $cfg "CAS_ISSUER" .Values.global.casIssuer -}}{{- end -}}
{{- if .Values.global.casApiUrl -}}{{- $_ := set $cfg "CAS_API_URL" .Values.global.casApiUrl -}}{{- end -}}
{{- range $name, $value := $v.env -}}{{- $_ := set $cfg $name (toString $value) -}}{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{- define "collect-api.secretEnv" -}}
{{- $s := .Values.collectApi.secret -}}
{{- range $s.required }}
- name: {{ . }}
  valueFrom:
    secretKeyRef: { name: {{ $s.name }}, key: {{ . }} }
{{- end }}
{{- range $s.optional }}
- name: {{ . }}
  valueFrom:
    secretKeyRef: { name: {{ $s.name }}, key: {{ . }}, optional: true }
{{- end }}
{{- end -}}

{{- define "collect-api.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "collect-api.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "collect-api.volumes" -}}
- name: tmp
  emptyDir: {}
- name: media
{{- if .Values.collectApi.media.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.collectApi.media.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}

{{- define "collect-api.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: media
  mountPath: /data/media
{{- end -}}

{{- define "collect-api.probes" -}}
startupProbe:
  httpGet: { path: /health/live, port: http }
  periodSeconds: 2
  failureThreshold: 60
livenessProbe:
  httpGet: { path: /health/live, port: http }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /health/ready, port: http }
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end -}}
