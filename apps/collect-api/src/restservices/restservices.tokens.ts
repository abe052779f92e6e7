export const NETWORK_GUARD = Symbol('NETWORK_GUARD');
export const DELIVERY_QUEUE = 'restservice-deliveries';

export interface DeliveryJob {
  rowId: number;
}
