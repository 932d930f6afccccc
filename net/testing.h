/* Deprecated: include "ingot/testing.h" (include/ingot/, where all of an
 * app's API lives now). This forwarder stays for this release only, so
 * that apps written against the old path keep building. */
#ifndef NET_TESTING_H
#define NET_TESTING_H

#include "ingot/testing.h"

#endif
