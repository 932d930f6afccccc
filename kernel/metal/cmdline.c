/* Command line → argv, word by word into one buffer, with the network words'
 * translation table; and the boot's line, kept. */
#include "cmdline.h"

#include <stdbool.h>
#include <string.h>

static const struct {
	const char *from, *to;
} translations[] = {
	{ "ingot.ip=", "INGOT_NET_IP=" },
	{ "ingot.gw=", "INGOT_NET_GW=" },
};

/* The next word, without its quotes, into out (cap bytes with the NUL);
 * returns the bytes written without the NUL, or -1 when no word is left,
 * -2 when it does not fit. */
static int next_word(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (!*s) {
		*p = s;
		return -1;
	}
	size_t n = 0;
	bool quoted = false, fits = true;
	for (; *s && (quoted || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
		if (*s == '"') {
			quoted = !quoted;
			continue;
		}
		if (n + 1 < cap)
			out[n++] = *s;
		else
			fits = false;
	}
	*p = s;
	if (cap)
		out[n] = '\0';
	return fits ? (int)n : -2;
}

int ig_metal_cmdline_args(const char *cmdline, const char *name, struct ig_metal_args *out)
{
	size_t used = strlen(name) + 1;
	memcpy(out->buf, name, used);
	out->argv[0] = out->buf;
	out->argc = 1;
	out->argv[1] = NULL;
	const char *p = cmdline ? cmdline : "";
	char word[IG_METAL_ARGS_BYTES];
	int n;
	while ((n = next_word(&p, word, sizeof word)) != -1) {
		if (n < 0 || out->argc == IG_METAL_MAX_ARGS)
			return -1;
		const char *prefix = "", *rest = word;
		for (size_t i = 0; i < sizeof translations / sizeof translations[0]; i++) {
			size_t k = strlen(translations[i].from);
			if (strncmp(word, translations[i].from, k) == 0) {
				prefix = translations[i].to;
				rest = word + k;
			}
		}
		size_t plen = strlen(prefix), rlen = strlen(rest);
		if (used + plen + rlen + 1 > sizeof out->buf)
			return -1;
		char *dst = out->buf + used;
		memcpy(dst, prefix, plen);
		memcpy(dst + plen, rest, rlen + 1);
		used += plen + rlen + 1;
		out->argv[out->argc++] = dst;
		out->argv[out->argc] = NULL;
	}
	return out->argc;
}

static char boot_cmdline[IG_METAL_CMDLINE_MAX];

int ig_metal_cmdline_keep(const char *cmdline)
{
	size_t n = strnlen(cmdline, IG_METAL_CMDLINE_MAX);
	if (n == IG_METAL_CMDLINE_MAX)
		return -1;
	memcpy(boot_cmdline, cmdline, n + 1);
	return 0;
}

const char *ig_metal_boot_cmdline(void)
{
	return boot_cmdline;
}

const char *ig_metal_cmdline_value(const char *cmdline, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);
	const char *p = cmdline ? cmdline : "";
	char word[IG_METAL_ARGS_BYTES];
	const char *found = NULL;
	int n;
	while ((n = next_word(&p, word, sizeof word)) != -1) {
		if (n < 0 || (size_t)n <= klen || word[klen] != '=' || strncmp(word, key, klen) != 0)
			continue;
		if ((size_t)n - klen - 1 >= cap) {
			found = NULL;
			continue;
		}
		memcpy(out, word + klen + 1, (size_t)n - klen);
		found = out;
	}
	return found;
}
