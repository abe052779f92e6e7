{{- define "cas.fullname" -}}
{{- default .Release.Name .Values.cas.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cas.labels" -}}
app.kubernetes.io/name: cas
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "cas.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: collect-platform
collect-platform/environment: {{ .Values.global.environment | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "cas.selector" -}}
app.kubernetes.io/name: cas
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "cas.tag" -}}
{{- $tag := toString (default .Values.global.imageTag .Values.cas.image.tag) -}}
{{- if or (not $tag) (eq $tag "<nil>") -}}{{- fail "global.imageTag (or cas.image.tag) is required" -}}{{- end -}}
{{- if eq $tag "latest" -}}{{- fail "image tag `latest` is refused: deploy a built tag" -}}{{- end -}}
{{- $tag -}}
{{- end -}}

{{- define "cas.image" -}}
{{- $repo := default (printf "%s/cas" .Values.global.imageRegistry) .Values.cas.image.repository -}}
{{- printf "%s:%s" $repo (include "cas.tag" .) -}}
{{- end -}}

{{/* Non-secret environment shared by the ConfigMap (Deployments) and the migrate Job (inline,
     because a pre-install hook runs before the ConfigMap exists). */}}
{{- define "cas.config" -}}
{{- $v := .Values.cas -}}
{{- range $name, $_ := $v.env -}}
{{- if has $name $v.secretNames -}}{{- fail (printf "cas.env.%s holds a secret: list it in cas.secret instead" $name) -}}{{- end -}}
{{- end -}}
{{- if not .Values.global.casIssuer -}}{{- fail "global.casIssuer is required (the public issuer URL)" -}}{{- end -}}
{{- $cfg := dict "CAS_PORT" "4000" "CAS_HOST" "0.0.0.0" "CAS_ISSUER" .Values.global.casIssuer -}}
{{- if .Values.cas.seed.secretName -}}{{- $_ := set $cfg "CAS_SEED_FILE" (printf "/etc/cas/seed/%s" .Values.cas.seed.key) -}}{{- end -}}
{{- range $name, $value := $v.env -}}{{- $_ := set $cfg $name (toString $value) -}}{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{- define "cas.secretEnv" -}}
{{- $s := .Values.cas.secret -}}
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

{{- define "cas.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "cas.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "cas.volumes" -}}
- name: tmp
  emptyDir: {}
{{- if .Values.cas.seed.secretName }}
- name: seed
  secret:
    secretName: {{ .Values.cas.seed.secretName }}
    items:
      - { key: {{ .Values.cas.seed.key }}, path: {{ .Values.cas.seed.key }} }
{{- end }}
{{- end -}}

{{- define "cas.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if .Values.cas.seed.secretName }}
- name: seed
  mountPath: /etc/cas/seed
  readOnly: true
{{- end }}
{{- end -}}

{{- define "cas.probes" -}}
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
