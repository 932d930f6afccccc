/* ig_html_escape (html.h): runs of plain bytes are copied whole, so the
 * cost is one pass and one copy per run, not per byte. */
#include "ingot/html.h"

void ig_html_escape(ig_wbuf *w, const char *s, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		const char *entity;
		size_t len;
		switch (s[i]) {
		case '&': entity = "&amp;", len = 5; break;
		case '<': entity = "&lt;", len = 4; break;
		case '>': entity = "&gt;", len = 4; break;
		case '"': entity = "&quot;", len = 6; break;
		case '\'': entity = "&#39;", len = 5; break;
		default: continue;
		}
		ig_wbuf_put(w, s + run, i - run);
		ig_wbuf_put(w, entity, len);
		run = i + 1;
	}
	ig_wbuf_put(w, s + run, n - run);
}
