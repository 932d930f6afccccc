/* lwIP's settings' values parsed strictly (a bad one stops the start with
 * exit status 2, as every setting does): the frame device, and the static
 * address with its prefix and gateway. */
#include "net_config.h"

#include <stdio.h>
#include <string.h>

struct ig_lwip_net_config ig_lwip_net_config;

int ig_lwip_parse_ipv4(const char *s, uint32_t *ip)
{
	uint32_t v = 0;
	for (int part = 0; part < 4; part++) {
		if (part && *s++ != '.')
			return -1;
		const char *start = s;
		unsigned n = 0;
		for (; *s >= '0' && *s <= '9' && s - start < 3; s++)
			n = n * 10 + (unsigned)(*s - '0');
		/* no leading zeros: inet_aton would read them as octal */
		if (s == start || n > 255 || (*start == '0' && s - start > 1) || (*s >= '0' && *s <= '9'))
			return -1;
		v = v << 8 | n;
	}
	if (*s)
		return -1;
	*ip = __builtin_bswap32(v); /* network order on x86_64 */
	return 0;
}

/* "A.B.C.D/N", N from 0 to 32. */
static int parse_cidr(const char *s, uint32_t *ip, uint32_t *netmask)
{
	char addr[16];
	const char *slash = strchr(s, '/');
	if (!slash || (size_t)(slash - s) >= sizeof addr)
		return -1;
	const char *p = slash + 1;
	unsigned prefix = 0;
	for (; *p >= '0' && *p <= '9' && p - slash <= 2; p++)
		prefix = prefix * 10 + (unsigned)(*p - '0');
	if (p == slash + 1 || *p || prefix > 32)
		return -1;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (ig_lwip_parse_ipv4(addr, ip) != 0)
		return -1;
	*netmask = __builtin_bswap32(prefix ? 0xFFFFFFFFu << (32 - prefix) : 0);
	return 0;
}

static int parse_device(const char *s, struct ig_lwip_net_config *out)
{
	out->ifname[0] = '\0';
	if (strcmp(s, "virtio") == 0) {
		out->device = LWIP_DEVICE_VIRTIO;
		return 0;
	}
	const char *name = s + 4;
	if (strncmp(s, "tap:", 4) != 0 || !*name || strlen(name) > LWIP_IFNAME_MAX || strpbrk(name, "/: \t"))
		return -1;
	out->device = LWIP_DEVICE_TAP;
	strcpy(out->ifname, name);
	return 0;
}

const char *ig_lwip_net_parse(struct ig_lwip_net_config *out, const char *net, const char *ip, const char *gw, char *err,
			   size_t errlen)
{
	*out = (struct ig_lwip_net_config){ .dhcp = !ip[0] };
	if (parse_device(net, out) != 0)
		snprintf(err, errlen, "invalid INGOT_NET \"%s\": expected kernel, tap:NAME (at most %d bytes) or virtio",
			 net, LWIP_IFNAME_MAX);
	else if (ip[0] && parse_cidr(ip, &out->ip, &out->netmask) != 0)
		snprintf(err, errlen, "invalid INGOT_NET_IP \"%s\": expected A.B.C.D/N", ip);
	else if (gw[0] && ig_lwip_parse_ipv4(gw, &out->gw) != 0)
		snprintf(err, errlen, "invalid INGOT_NET_GW \"%s\": expected A.B.C.D", gw);
	else if (gw[0] && !ip[0])
		snprintf(err, errlen, "INGOT_NET_GW needs INGOT_NET_IP (DHCP gives the gateway)");
	else
		return NULL;
	return err;
}
