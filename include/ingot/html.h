/* Text for HTML bodies: the escaping a handler of a text/html response
 * (its out member is an ig_str, see tools/schemac) needs for data it puts
 * between tags or inside quoted attribute values. */
#ifndef INGOT_HTML_H
#define INGOT_HTML_H

#include "ingot/base.h"

/* Appends s[0..n) to w with & < > " ' written as &amp; &lt; &gt; &quot;
 * &#39;, every other byte as it is (UTF-8 passes through untouched). s
 * is read during the call only (NULL when n is 0); any thread that owns
 * w. On allocation failure w->failed is set and the rest is dropped, as
 * for every ig_wbuf write. */
IG_NONNULL(1) void ig_html_escape(ig_wbuf *w, const char *s, size_t n);

#endif
