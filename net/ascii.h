/* ASCII case for protocol text (HTTP field names and tokens, URL hosts, DNS
 * names): the bytes A-Z only, whatever the C locale says, which tolower()
 * does not promise. One definition for net/http and net/client. */
#ifndef NET_ASCII_H
#define NET_ASCII_H

static inline char ig_ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

#endif
