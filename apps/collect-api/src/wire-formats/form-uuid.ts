/** Form uuids are shown as 32 hex digits (no dashes), as XLSForm tools write `formhub/uuid`. */
export function formUuidHex(uuid: string): string {
  return uuid.replace(/-/g, '');
}
