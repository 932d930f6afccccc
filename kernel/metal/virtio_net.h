/* The machine's network card: a virtio-net device on virtio-mmio, carrying
 * one Ethernet frame (up to 1514 bytes, no FCS) per receive or send. The
 * platform's /dev/virtio-net frame device sits on top of it. Single core,
 * called with interrupts off; memory is identity-mapped (phys == virt). */
#ifndef KERNEL_METAL_VIRTIO_NET_H
#define KERNEL_METAL_VIRTIO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define IG_VIRTIO_NET_FRAME_MAX 1514

/* Finds the device (the command line's `virtio_mmio.device=SIZE@BASE:IRQ`
 * words if it has any, else microvm's 24 transports), resets it, negotiates
 * MAC (and VERSION_1 on a modern device), sets up the receive and transmit
 * queues, posts every receive buffer, sets DRIVER_OK and routes its
 * interrupt to IG_METAL_IRQ_VECTOR. Returns 0, or -1 when there is no
 * network device or it refused the setup. */
int ig_virtio_net_init(const char *cmdline);

/* The device's MAC address (a fixed locally administered one when the
 * device offers none). */
void ig_virtio_net_mac(uint8_t mac[6]);

/* Acknowledges the device's interrupt, takes back the transmit buffers the
 * device is done with; true if a received frame is waiting. */
bool ig_virtio_net_poll(void);

/* Copies the oldest received frame, without its virtio header, into buf
 * (at most cap bytes; a longer frame is cut) and gives its buffer back to
 * the device. Returns the bytes copied, 0 when no frame waits. */
ssize_t ig_virtio_net_recv(void *buf, size_t cap);

/* Sends one frame gathered from iov (copied: the caller's memory is free on
 * return). Returns 0, or -1 when the transmit ring is full (or the frame is
 * empty or longer than IG_VIRTIO_NET_FRAME_MAX, or there is no device). */
int ig_virtio_net_send(const struct iovec *iov, int iovcnt);

#endif
