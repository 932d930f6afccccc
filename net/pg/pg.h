/* Deprecated: include "ingot/pg.h" (include/ingot/, where all of an
 * app's API lives now). This forwarder stays for this release only, so
 * that apps written against the old path keep building. */
#ifndef NET_PG_PG_H
#define NET_PG_PG_H

#include "ingot/pg.h"

#endif
