export const NETWORK_GUARD = Symbol('NETWORK_GUARD');
export const DELIVERY_QUEUE = 'restservice-deliveries';

/** One outbox row to deliver, or (spreadsheet) one service to back-fill. */
export interface DeliveryJob {
  rowId: number;
  backfillServiceId?: number;
}
