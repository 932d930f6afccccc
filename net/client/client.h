/* Deprecated: include "ingot/client.h" (include/ingot/, where all of an
 * app's API lives now). This forwarder stays for this release only, so
 * that apps written against the old path keep building. */
#ifndef NET_CLIENT_CLIENT_H
#define NET_CLIENT_CLIENT_H

#include "ingot/client.h"

#endif
