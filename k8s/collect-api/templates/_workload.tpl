{{/* One Deployment (+ HPA + PDB) per component: "api" or "worker". Same image, other args. */}}
{{- define "collect-api.workload" -}}
{{- $root := .root -}}
{{- $name := .component -}}
{{- $c := index $root.Values.collectApi $name -}}
{{- $full := printf "%s-%s" (include "collect-api.fullname" $root) $name -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $full }}
  labels:
    {{- include "collect-api.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  {{- if not $c.autoscaling.enabled }}
  replicas: {{ $c.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  selector:
    matchLabels:
      {{- include "collect-api.selector" $root | nindent 6 }}
      app.kubernetes.io/component: {{ $name }}
  template:
    metadata:
      labels:
        {{- include "collect-api.selector" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $name }}
      annotations:
        # Roll the pods when the non-secret configuration changes.
        checksum/config: {{ include "collect-api.config" $root | sha256sum }}
        {{- with $root.Values.collectApi.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      securityContext:
        {{- include "collect-api.podSecurityContext" $root | nindent 8 }}
      {{- with $root.Values.global.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: {{ include "collect-api.image" $root }}
          imagePullPolicy: {{ $root.Values.global.imagePullPolicy }}
          args: ["node", "apps/collect-api/dist/{{ if eq $name "api" }}main{{ else }}worker{{ end }}.js"]
          ports:
            - { name: http, containerPort: 3000, protocol: TCP }
          envFrom:
            - configMapRef:
                name: {{ include "collect-api.fullname" $root }}
          env:
            # The migrate Job applies migrations before these pods start.
            - { name: MIGRATIONS_RUN, value: "false" }
            - { name: SHUTDOWN_GRACE_MS, value: {{ $c.shutdownGraceMs | quote }} }
            {{- if eq $name "worker" }}
            # The worker serves its probes and /metrics on the same container port as the API.
            - { name: WORKER_PORT, value: "3000" }
            {{- end }}
            {{- include "collect-api.secretEnv" $root | nindent 12 }}
          {{- include "collect-api.probes" $root | nindent 10 }}
          {{- if and (eq $name "api") $c.preStopSleepSeconds }}
          lifecycle:
            preStop:
              # Let the endpoint leave the Service/Ingress before the app stops accepting requests.
              exec: { command: ["node", "-e", "setTimeout(() => {}, {{ mul $c.preStopSleepSeconds 1000 }})"] }
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- include "collect-api.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            {{- include "collect-api.volumeMounts" $root | nindent 12 }}
      volumes:
        {{- include "collect-api.volumes" $root | nindent 8 }}
      # Spread replicas over nodes so a node loss or drain takes few of them at once (best effort).
      topologySpreadConstraints:
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "collect-api.selector" $root | nindent 14 }}
              app.kubernetes.io/component: {{ $name }}
      {{- with $root.Values.collectApi.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.collectApi.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.collectApi.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- if $c.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $full }}
  labels:
    {{- include "collect-api.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $full }}
  minReplicas: {{ $c.autoscaling.minReplicas }}
  maxReplicas: {{ $c.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $c.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
{{- if $c.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $full }}
  labels:
    {{- include "collect-api.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  minAvailable: {{ $c.pdb.minAvailable }}
  selector:
    matchLabels:
      {{- include "collect-api.selector" $root | nindent 6 }}
      app.kubernetes.io/component: {{ $name }}
{{- end }}
{{- end -}}
