/* lwIP's settings, parsed: which frame device (INGOT_NET), the static
 * address (INGOT_NET_IP, INGOT_NET_GW) or DHCP. Plain C without lwIP's
 * headers, so the unit test needs none. */
#ifndef NET_LWIP_NET_CONFIG_H
#define NET_LWIP_NET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lwip_device { LWIP_DEVICE_TAP, LWIP_DEVICE_VIRTIO };
#define LWIP_IFNAME_MAX 15 /* IFNAMSIZ - 1 */

/* Addresses in network byte order. */
struct ig_lwip_net_config {
	enum lwip_device device;
	char ifname[LWIP_IFNAME_MAX + 1]; /* tap:NAME's NAME */
	bool dhcp;                        /* no INGOT_NET_IP */
	uint32_t ip, netmask, gw;         /* gw 0: none */
};
extern struct ig_lwip_net_config ig_lwip_net_config;

/* Fills out from the three values ("" for an unset one); NULL, or the
 * message in err naming the setting. net: "tap:NAME" | "virtio"; ip:
 * "A.B.C.D/N"; gw: "A.B.C.D". */
const char *ig_lwip_net_parse(struct ig_lwip_net_config *out, const char *net, const char *ip, const char *gw, char *err,
			   size_t errlen);

/* "A.B.C.D" (decimal, no leading zeros) into network order; 0 or -1. */
int ig_lwip_parse_ipv4(const char *s, uint32_t *ip);

#endif
