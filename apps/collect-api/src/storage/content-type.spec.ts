import { detectMimetype } from './content-type.js';
import { servedContentType } from './served-content.js';

const b = (...bytes: number[]) => Buffer.from(bytes);

describe('detectMimetype', () => {
  it('trusts the bytes over the name', () => {
    expect(detectMimetype(b(0xff, 0xd8, 0xff, 0xe0), 'photo.png')).toBe('image/jpeg');
    expect(detectMimetype(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), 'x.bin')).toBe('image/png');
    expect(detectMimetype(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'), 'a')).toBe('audio/wav');
    expect(detectMimetype(Buffer.from('RIFF\0\0\0\0AVI LIST', 'latin1'), 'a')).toBe('video/x-msvideo');
    expect(detectMimetype(Buffer.from('\0\0\0\x18ftypmp42', 'latin1'), 'clip.mp4')).toBe('video/mp4');
    expect(detectMimetype(Buffer.from('\0\0\0\x18ftypM4A ', 'latin1'), 'voice.m4a')).toBe('audio/mp4');
    expect(detectMimetype(Buffer.from('%PDF-1.7', 'latin1'), 'doc')).toBe('application/pdf');
  });

  it('never lets a name make unknown bytes active content', () => {
    expect(detectMimetype(Buffer.from('<html><script>'), 'evil.html')).toBe('application/octet-stream');
    expect(detectMimetype(Buffer.from('<svg onload=x>'), 'evil.svg')).toBe('application/octet-stream');
    expect(detectMimetype(Buffer.from('a,b\n1,2'), 'data.csv')).toBe('text/csv');
    expect(detectMimetype(Buffer.from('??'), 'noext')).toBe('application/octet-stream');
  });

  it('never lets a name make a zip container active content', () => {
    const zip = Buffer.from('PK\x03\x04<script>alert(1)</script>', 'latin1');
    for (const name of ['x.html', 'x.htm', 'x.svg', 'x.xhtml', 'x.xml', 'x.js']) expect(detectMimetype(zip, name)).toBe('application/zip');
    expect(detectMimetype(zip, 'report.docx')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(detectMimetype(zip, 'sheet.xlsx')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  });
});

describe('servedContentType', () => {
  it('serves a stored active type as application/octet-stream, others as stored', () => {
    for (const t of ['text/html', 'text/html; charset=utf-8', 'image/svg+xml', 'application/xhtml+xml', 'text/xml', 'application/xml', 'application/atom+xml', 'text/javascript', 'TEXT/HTML']) {
      expect(servedContentType(t)).toBe('application/octet-stream');
    }
    for (const t of ['image/jpeg', 'audio/wav', 'application/pdf', 'text/csv', 'application/zip', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document']) expect(servedContentType(t)).toBe(t);
  });
});
