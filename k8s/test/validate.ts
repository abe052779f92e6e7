import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import type { Manifest } from './helm.js';

// Every kind the charts may render, with its schema. An unknown kind fails the test, so a new
// template cannot slip through without validation (ServiceMonitor is a CRD: checked by hand).
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment as never,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler as never,
  'batch/v1/Job': Job as never,
  'networking.k8s.io/v1/Ingress': Ingress as never,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget as never,
  'v1/ConfigMap': ConfigMap as never,
  'v1/Service': Service as never,
};

export function validateManifest(doc: Manifest): void {
  const key = `${doc.apiVersion}/${doc.kind}`;
  if (key === 'monitoring.coreos.com/v1/ServiceMonitor') {
    if (!doc.spec?.selector?.matchLabels || !Array.isArray(doc.spec?.endpoints)) throw new Error('ServiceMonitor needs selector and endpoints');
    return;
  }
  const Model = MODELS[key];
  if (!Model) throw new Error(`no schema for ${key} (${doc.metadata.name})`);
  new Model(doc as never).validate();
}
