/* The process's start (net/start.c): ig_main (declared with the app's
 * contract in net/http/exchange.h) and the one settings table it parses. */
#ifndef NET_START_H
#define NET_START_H

#include "kernel/runtime/config.h"

/* Every part's settings as ig_main parses them: the one table, so that the
 * test core (net/testing.c) reads the settings the server would. */
enum ig_config_result ig_settings_parse(const struct ig_config_args *args);

#endif
