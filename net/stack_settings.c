/* The network stack's rows of the settings table: INGOT_NET picks the
 * kernel's sockets or lwIP (over a TAP device or the machine's virtio NIC),
 * INGOT_NET_IP and INGOT_NET_GW lwIP's static address (none: DHCP). The
 * stack chosen judges the values (net/stack_kernel.c, net/lwip); a binary
 * built without lwIP says so instead of serving on the kernel's sockets
 * unasked. */
#include "net/stack.h"
#include "ingot/base.h"

#include <stdio.h>
#include <string.h>

const struct ig_net_stack *ig_net_stack = &ig_kernel_stack;

/* Defined by net/lwip (make lwip) only: a weak reference pulls nothing in,
 * and its address is NULL where it is absent. */
extern const struct ig_net_stack ig_lwip_stack __attribute__((weak));

struct net_values {
	const char *net, *ip, *gw;
};
static struct net_values net_values;
static const struct net_values net_defaults = { .net = "kernel", .ip = "", .gw = "" };

#define NET(field) &net_values.field
static const struct ig_option net_rows[] = {
	{ "INGOT_NET", IG_OPT_STR, NET(net), 0, 0, IG_HELP("kernel (its sockets), tap:NAME or virtio (lwIP over them)") },
	{ "INGOT_NET_IP", IG_OPT_STR, NET(ip), 0, 0, IG_HELP("lwIP's A.B.C.D/N; unset: DHCP") },
	{ "INGOT_NET_GW", IG_OPT_STR, NET(gw), 0, 0, IG_HELP("lwIP's gateway A.B.C.D") },
};

__attribute__((cold)) static const char *check_net(char *err, size_t errlen)
{
	const struct net_values *v = &net_values;
	if (strcmp(v->net, "kernel") == 0) {
		ig_net_stack = &ig_kernel_stack;
	} else if (&ig_lwip_stack) {
		ig_net_stack = &ig_lwip_stack;
	} else {
		snprintf(err, errlen, "INGOT_NET=%s needs lwIP: this binary has none (make lwip)", v->net);
		return err;
	}
	return ig_net_stack->configure(v->net, v->ip, v->gw, err, errlen);
}

const struct ig_settings ig_net_settings = {
	.part = "network", .opts = net_rows, .count = IG_COUNTOF(net_rows), .check = check_net,
	.values = &net_values, .defaults = &net_defaults, .size = sizeof net_values,
};
