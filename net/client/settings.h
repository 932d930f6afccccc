/* The client's rows of the settings table
 * (kernel/runtime/config.h), and where their parsed values live. The process's
 * start parses them with every other part's; the parse first copies in
 * their defaults, so a program that calls out must parse them. */
#ifndef NET_CLIENT_SETTINGS_H
#define NET_CLIENT_SETTINGS_H

#include "kernel/runtime/config.h"
#include "ingot/client.h"

/* INGOT_CLIENT_*: the options of each core's shared Agent (ig_core_agent).
 * All zero (every default) until parsed. */
extern ig_client_opts ig_client_settings_opts;
extern const struct ig_settings ig_client_settings;

#endif
