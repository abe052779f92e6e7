import { parseRetryAfter, type SendResult } from '../delivery/delivery-sender.js';

/** The few Google Sheets API v4 calls the spreadsheet sync needs, against SHEETS_API_BASE_URL. */
export interface SheetsCall extends SendResult {
  json: Record<string, unknown> | null;
}

export class SheetsClient {
  constructor(private readonly baseUrl: string, private readonly timeoutMs: number) {}

  /** spreadsheets.create */
  create(token: string, title: string): Promise<SheetsCall> {
    return this.call(token, 'POST', '/v4/spreadsheets', { properties: { title }, sheets: [{ properties: { title: 'Sheet1' } }] });
  }

  /** spreadsheets.values.update of whole rows starting at `row` (1-based). */
  update(token: string, id: string, row: number, values: string[][]): Promise<SheetsCall> {
    const range = `Sheet1!A${row}`;
    return this.call(token, 'PUT', `/v4/spreadsheets/${encodeURIComponent(id)}/values/${encodeURIComponent(range)}?valueInputOption=RAW`, { range, majorDimension: 'ROWS', values });
  }

  /** spreadsheets.values.append after the last row of the table. */
  append(token: string, id: string, values: string[][]): Promise<SheetsCall> {
    const range = 'Sheet1!A1';
    return this.call(token, 'POST', `/v4/spreadsheets/${encodeURIComponent(id)}/values/${encodeURIComponent(range)}:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`, { range, majorDimension: 'ROWS', values });
  }

  /** spreadsheets.values.clear of one row. */
  clearRow(token: string, id: string, row: number): Promise<SheetsCall> {
    const range = `Sheet1!A${row}:ZZ${row}`;
    return this.call(token, 'POST', `/v4/spreadsheets/${encodeURIComponent(id)}/values/${encodeURIComponent(range)}:clear`, {});
  }

  private async call(token: string, method: string, path: string, body: unknown): Promise<SheetsCall> {
    const started = Date.now();
    try {
      const res = await fetch(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
        method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.text();
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
      return { statusCode: res.status, latencyMs: Date.now() - started, error: null, responseExcerpt: text.slice(0, 1000), retryAfterMs: parseRetryAfter(res.headers.get('retry-after') ?? undefined), json };
    } catch (err) {
      return { statusCode: null, latencyMs: Date.now() - started, error: (err as Error).message, responseExcerpt: null, retryAfterMs: null, json: null };
    }
  }
}

/** First row number of an `updatedRange` such as `Sheet1!A5:K7`. */
export function firstRowOf(range: unknown): number | null {
  const m = typeof range === 'string' ? /![A-Z]+(\d+)/.exec(range) : null;
  return m ? Number(m[1]) : null;
}
