/* Text for HTML bodies: the escaping a handler of a text/html response
 * (its out member is an ig_str, see tools/schemac) needs for data it puts
 * between tags or inside quoted attribute values. */
#ifndef NET_API_HTML_H
#define NET_API_HTML_H

#include "kernel/runtime/ingot.h"

/* Appends s[0..n) to w with & < > " ' written as &amp; &lt; &gt; &quot;
 * &#39;, every other byte as it is (UTF-8 passes through untouched). On
 * allocation failure w->failed is set, as for every ig_wbuf write. */
void ig_html_escape(ig_wbuf *w, const char *s, size_t n);

#endif
