import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { detectMimetype } from '../storage/content-type.js';
import { headOf, readMultipartSubmission } from './multipart.js';

describe('headOf (the bytes a held attachment is sniffed by)', () => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, ...Buffer.from('JFIF and then the rest of a photo')]);

  it('answers the first 16 bytes across chunks of any sizes, empty ones included', () => {
    for (const cuts of [[], [1], [2, 3], [0, 0, 5], [15], [16], [17], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]]) {
      const chunks: Buffer[] = [];
      let at = 0;
      for (const cut of cuts) {
        chunks.push(jpeg.subarray(at, at + cut));
        at += cut;
      }
      chunks.push(jpeg.subarray(at));
      expect(headOf(chunks)).toEqual(jpeg.subarray(0, 16));
      expect(detectMimetype(headOf(chunks), 'photo.bin')).toBe('image/jpeg');
    }
  });

  it('answers a short part whole, and nothing for no bytes', () => {
    expect(headOf([Buffer.from('ab'), Buffer.from('c')])).toEqual(Buffer.from('abc'));
    expect(headOf([])).toEqual(Buffer.alloc(0));
    expect(headOf([Buffer.alloc(0)])).toEqual(Buffer.alloc(0));
  });

  it('copies the head alone, never the part: the answer shares no memory with the chunks', () => {
    const big = Buffer.alloc(100 * 1024, 7);
    const head = headOf([big.subarray(0, 60 * 1024), big.subarray(60 * 1024)]);
    expect(head.length).toBe(16);
    expect(head.buffer.byteLength).toBeLessThan(big.length);
    head[0] = 1;
    expect(big[0]).toBe(7);
  });
});

describe('readMultipartSubmission: parts held in memory', () => {
  it('cleanup drops them, chunk arrays emptied (docs/architecture.md, "OpenRosa uploads: spooled once, renamed into place")', async () => {
    const body = Buffer.from(
      '--b0\r\nContent-Disposition: form-data; name="xml_submission_file"; filename="s.xml"\r\nContent-Type: text/xml\r\n\r\n<data id="x"/>\r\n' +
        '--b0\r\nContent-Disposition: form-data; name="p.jpg"; filename="p.jpg"\r\nContent-Type: image/jpeg\r\n\r\nabcdef\r\n--b0--\r\n',
    );
    const req = Object.assign(Readable.from([body]), { headers: { 'content-type': 'multipart/form-data; boundary=b0', 'content-length': String(body.length) } });
    const upload = await readMultipartSubmission(req as never, { attachmentMaxBytes: 1000, xmlMaxBytes: 1000, maxFiles: 5, tmpDir: tmpdir() }, async (xml) => xml);
    expect(upload.authorized).toBe('<data id="x"/>');
    const chunks = upload.files[0].bytes!;
    expect(upload.files[0].tmpPath).toBe('');
    expect(Buffer.concat(chunks).toString()).toBe('abcdef');
    await upload.cleanup();
    expect(upload.files[0].bytes).toBeUndefined();
    expect(chunks).toHaveLength(0);
  });
});
