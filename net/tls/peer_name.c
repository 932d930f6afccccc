/* ig_tls_peer_name_parse (peer_name.h): what both backends' client roles
 * need of a server name, so that they cannot differ in it. */
#include "peer_name.h"

#include <arpa/inet.h>
#include <string.h>

int ig_tls_peer_name_parse(struct tls_peer_name *p, const char *name)
{
	*p = (struct tls_peer_name){ 0 };
	size_t len = strlen(name);
	if (inet_pton(AF_INET, name, p->ip) == 1) {
		p->ip_len = 4;
		return 0;
	}
	char v6[INET6_ADDRSTRLEN + 2];
	const char *bare = name;
	if (len >= 2 && len < sizeof v6 && name[0] == '[' && name[len - 1] == ']') {
		memcpy(v6, name + 1, len - 2);
		v6[len - 2] = 0;
		bare = v6;
	}
	if (inet_pton(AF_INET6, bare, p->ip) == 1) {
		p->ip_len = 16;
		return 0;
	}
	if (len > 0 && name[len - 1] == '.')
		len--;
	if (len == 0 || len >= sizeof p->host)
		return -1;
	memcpy(p->host, name, len);
	return 0;
}
