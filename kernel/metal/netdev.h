/* The frame device of the unikernel, /dev/virtio-net (what
 * net/lwip/frames.c expects of a Linux TAP with IFF_NO_PI): one Ethernet
 * frame per read or write, never blocking, the MAC through SIOCGIFHWADDR.
 * The driver underneath is virtio_net.h; it is probed at the first open. */
#ifndef KERNEL_METAL_NETDEV_H
#define KERNEL_METAL_NETDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#define IG_NETDEV_PATH "/dev/virtio-net"

/* 0, -EBUSY when open already, -ENODEV when the machine has no NIC. */
long ig_netdev_open(void);
void ig_netdev_close(void);
/* True when a received frame waits (also acknowledges the interrupt and
 * reclaims sent buffers). */
bool ig_netdev_readable(void);
/* The frame's length, or -EAGAIN. */
long ig_netdev_read(void *buf, size_t cap);
/* total, or -EAGAIN when the transmit ring is full (the frame is dropped). */
long ig_netdev_write(const struct iovec *iov, int iovcnt, size_t total);
long ig_netdev_ioctl(unsigned long req, void *arg);

#endif
