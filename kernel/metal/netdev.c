/* /dev/virtio-net over the virtio-net driver (virtio_net.c): the file
 * operations of the frame device (netdev.h), nothing more. */
#include "netdev.h"
#include "cmdline.h"
#include "virtio_net.h"

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>
#include <sys/ioctl.h>

#define MAX_FRAME 1514

static bool probed, present, opened;

long ig_netdev_open(void)
{
	if (opened)
		return -EBUSY;
	if (!probed) {
		probed = true;
		present = ig_virtio_net_init(ig_metal_boot_cmdline()) == 0;
	}
	if (!present)
		return -ENODEV;
	opened = true;
	return 0;
}

void ig_netdev_close(void)
{
	opened = false;
}

bool ig_netdev_readable(void)
{
	return opened && ig_virtio_net_poll();
}

long ig_netdev_read(void *buf, size_t cap)
{
	ssize_t n = ig_virtio_net_recv(buf, cap);
	return n > 0 ? n : -EAGAIN;
}

long ig_netdev_write(const struct iovec *iov, int iovcnt, size_t total)
{
	if (total > MAX_FRAME)
		return -EMSGSIZE;
	return ig_virtio_net_send(iov, iovcnt) == 0 ? (long)total : -EAGAIN;
}

long ig_netdev_ioctl(unsigned long req, void *arg)
{
	if (req != SIOCGIFHWADDR)
		return -ENOTTY;
	struct ifreq *ifr = arg;
	uint8_t mac[6];
	ig_virtio_net_mac(mac);
	ifr->ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr->ifr_hwaddr.sa_data, mac, sizeof mac);
	return 0;
}
