/**
 * The shell of every server-rendered page of both services (collect-api's /o/ and /login pages,
 * the CAS interaction pages): no script, no external resource, no referrer. Callers build the
 * body from `escapeHtml`-ed values only.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem 2.5rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);width:22rem}
h1{font-size:1.3rem;margin-top:0} label{display:block;margin:.8rem 0 .2rem} input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:1.2rem;padding:.55rem 1.2rem;margin-right:.5rem;font-size:1rem;cursor:pointer} .error{color:#a40000;background:#fdecec;padding:.5rem .7rem;border-radius:4px}
ul{padding-left:1.2rem} .row{display:flex;gap:.8rem}`;

/** A whole HTML document: `title` is escaped here, `body` must already be safe markup. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>
${STYLE}
</style>
</head>
<body><main>
${body}
</main></body>
</html>`;
}

/** A page that only says what went wrong (an error or a refusal the user cannot act on in the page). */
export function messagePage(title: string, message: string): string {
  return htmlPage(title, `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(message)}</p>`);
}
