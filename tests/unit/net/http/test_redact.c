/* Unit tests of net/http/redact.c: a target's access_token values become
 * [redacted] (plain, %-encoded name, repeated, among other pairs, at a
 * cut), and a target with nothing to hide comes back as itself, uncopied. */
#include "net/http/redact.h"
#include "tests/unit/check.h"

#include <string.h>

static char buf[256];

static bool loggable_is(const char *target, const char *want)
{
	ig_str t = ig_http_target_loggable((ig_str){ target, strlen(target) }, buf, sizeof buf);
	return t.len == strlen(want) && memcmp(t.ptr, want, t.len) == 0;
}

static bool untouched(const char *target)
{
	ig_str t = ig_http_target_loggable((ig_str){ target, strlen(target) }, buf, sizeof buf);
	return t.ptr == target && t.len == strlen(target);
}

int main(void)
{
	CHECK(untouched("/health"), "no query: the target itself, not copied");
	CHECK(untouched("/ticker?n=3&interval_ms=0"), "a query without the name: itself");
	CHECK(untouched("/x/access_token=abc"), "the name in the path is no parameter");
	CHECK(untouched(""), "empty");
	CHECK(loggable_is("/ticker?access_token=eyJ.a.b", "/ticker?access_token=" IG_HTTP_REDACTED), "the value hidden");
	CHECK(loggable_is("/t?n=3&access_token=eyJ.a.b&x=1", "/t?n=3&access_token=" IG_HTTP_REDACTED "&x=1"),
	      "among other pairs, which stay");
	CHECK(loggable_is("/t?access_token=a&access_token=b",
			  "/t?access_token=" IG_HTTP_REDACTED "&access_token=" IG_HTTP_REDACTED),
	      "each occurrence");
	CHECK(loggable_is("/t?access%5Ftoken=abc&%61ccess_token=d",
			  "/t?access%5Ftoken=" IG_HTTP_REDACTED "&%61ccess_token=" IG_HTTP_REDACTED),
	      "a %-encoded name, as the door decodes it");
	CHECK(loggable_is("/t?q=%20&my_access_token=abc&access_tokens=d",
			  "/t?q=%20&my_access_token=abc&access_tokens=d"),
	      "other names that contain it stay (a copy: the query had a %)");
	CHECK(loggable_is("/t?access_token", "/t?access_token"), "no '=': no value to hide");
	CHECK(loggable_is("/t?access_token=&a=1", "/t?access_token=" IG_HTTP_REDACTED "&a=1"), "an empty value too");

	char small[20];
	const char *t = "/ticker?access_token=SECRETSECRET";
	ig_str s = ig_http_target_loggable((ig_str){ t, strlen(t) }, small, sizeof small);
	CHECK(s.len == sizeof small && memcmp(s.ptr, "/ticker?access_token", 20) == 0, "cut at the buffer's end");
	CHECK(!memmem(s.ptr, s.len, "SECRET", 6), "a cut copy shows none of the value");
	return check_done();
}
