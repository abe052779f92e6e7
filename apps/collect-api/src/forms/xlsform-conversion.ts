import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { convertXlsFormInWorker, runInWorker, type ConversionResult } from '@collect/xlsform';
import { CollectConfig } from '../config/collect-config.js';
import { HttpErrorWithHeaders } from '@collect/contracts';
import { inputLimitsOf, XmlInputError } from '../openrosa/xml.js';
import { parseXForm, type ParsedForm } from './form-definition.js';

/** XForms larger than this are read in a worker thread: parsing one takes about 1 ms per 3 KB. */
export const PARSE_IN_WORKER_CHARS = 100_000;

// Built code runs dist/forms/xform-parse.worker.js beside this file; under ts-jest the sources
// run from src/ and the worker runs the built file (pnpm test builds first), as in libs/xlsform.
const PARSE_WORKER = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/forms/xform-parse.worker.js', import.meta.url)
  : new URL('./xform-parse.worker.js', import.meta.url);

/** An XLSForm converted to an XForm (docs/forms.md, "XLSForm uploads"). */
export type ConvertedXlsForm = ConversionResult & { xml: string };

/** Old Excel workbooks are OLE2 compound files: they start with these bytes. */
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** 400 `{"detail", "errors", "warnings"}`, the shape of a conversion failure (docs/forms.md). */
export function conversionFailure(errors: string[], warnings: string[] = []): BadRequestException {
  const detail = errors.length === 1 ? errors[0] : `The XLSForm has ${errors.length} errors.`;
  return new BadRequestException({ detail, errors, warnings });
}

/**
 * Converts uploaded XLSForms with @collect/xlsform, each in a child process of its own so the
 * event loop keeps answering and a workbook that exhausts memory ends only that process
 * (docs/xlsform.md, "Converting off the event loop"), and reads large
 * XForms in a worker thread as well; at most XLSFORM_CONVERT_CONCURRENCY at once per process,
 * the others wait their turn.
 */
@Injectable()
export class XlsFormConversion {
  private readonly logger = new Logger(XlsFormConversion.name);
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly config: CollectConfig) {}

  async convert(data: Buffer, filename: string): Promise<ConvertedXlsForm> {
    if (/\.xls$/i.test(filename) || data.subarray(0, OLE2_MAGIC.length).equals(OLE2_MAGIC)) {
      // No well-kept npm library reads BIFF (.xls) workbooks (docs/forms.md, "XLSForm uploads").
      throw conversionFailure(['Old Excel (.xls) workbooks are not read: save the form as .xlsx (Excel Workbook) and upload that.']);
    }
    const fallbackFormName = filename.replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_.-]/g, '_') || undefined;
    await this.slot();
    let result: ConversionResult;
    try {
      result = await convertXlsFormInWorker(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), {
        fallbackFormName,
        timeoutMs: this.config.XLSFORM_CONVERT_TIMEOUT_MS,
        maxHeapMb: this.config.XLSFORM_CONVERT_MAX_HEAP_MB,
        limits: { maxFileBytes: this.config.FORM_MAX_BYTES },
      });
    } catch (err) {
      // A timeout or a converting process over its heap limit: the workbook is too much to convert
      // here. The process that ran out is a child of its own; this one carries on.
      this.logger.warn({ err }, 'XLSForm conversion failed');
      throw conversionFailure([`The XLSForm could not be converted: ${(err as Error).message}.`]);
    } finally {
      this.release();
    }
    if (result.xml === null) throw conversionFailure(result.errors, result.warnings);
    return result as ConvertedXlsForm;
  }

  /**
   * Reads an XForm into its field list. A large one (a converted 5,000-row XLSForm is ~800 KB)
   * is read in a worker thread too: on the event loop it would stall every other request for
   * about a quarter of the conversion's time. Throws XmlInputError as parseXForm does.
   */
  async parse(xml: string): Promise<ParsedForm> {
    const limits = inputLimitsOf(this.config);
    if (xml.length <= PARSE_IN_WORKER_CHARS) return parseXForm(xml, limits);
    await this.slot();
    try {
      let msg: { ok: true; parsed: ParsedForm } | { ok: false; inputError: boolean; status?: number; message: string };
      try {
        msg = await runInWorker(PARSE_WORKER, { xml, limits }, { timeoutMs: this.config.XLSFORM_CONVERT_TIMEOUT_MS, maxHeapMb: this.config.XLSFORM_CONVERT_MAX_HEAP_MB });
      } catch (err) {
        // A timeout or a worker over its heap limit: the document is too much to read here.
        throw new XmlInputError(`The XForm could not be read: ${(err as Error).message}.`);
      }
      if (msg.ok) return msg.parsed;
      throw failureOf(msg);
    } finally {
      this.release();
    }
  }

  private async slot(): Promise<void> {
    if (this.running < this.config.XLSFORM_CONVERT_CONCURRENCY) {
      this.running++;
      return;
    }
    // release() hands its slot straight to the next waiter (running stays the same).
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** The worker's refusal as the error parseXForm would have thrown on this thread. */
function failureOf(msg: { inputError: boolean; status?: number; message: string }): Error {
  if (msg.inputError) return new XmlInputError(msg.message);
  if (msg.status !== undefined && msg.status >= 400 && msg.status < 500) return new HttpErrorWithHeaders(msg.status, msg.message, {});
  return new Error(msg.message);
}
