/* ingot's version, and what a build records about where it came from.
 *
 * IG_VERSION is ingot's own version (semantic versioning; its changes are
 * listed in include/ingot/CHANGELOG.md), not the app's: the app's is its
 * document's info.version, which --version prints on its first line. */
#ifndef INGOT_VERSION_H
#define INGOT_VERSION_H

#define IG_VERSION "0.1.0"

/* What the build saw, written by tools/make/build-info into the app's
 * build/gen/build_info.c (ig_build_info) and linked into every app binary.
 * Read-only for the life of the process; safe from any thread.
 *   ingot_commit: ingot's git commit (12 hex digits, "-dirty" appended
 *                 when its tree had uncommitted changes), "" when ingot
 *                 was not built from a git checkout;
 *   app_commit:   the same for an app built outside ingot's tree (tools/
 *                 make/app.mk), "" for the reference service or an app
 *                 directory that is not a git checkout;
 *   time:         seconds since the epoch: SOURCE_DATE_EPOCH when the build
 *                 had it, else the last commit's time (the app's, else
 *                 ingot's), else 0; never the clock, so that two builds of
 *                 one commit are byte for byte the same. */
struct ig_build_info {
	const char *ingot_commit;
	const char *app_commit;
	long long time;
};

/* Defined by the generated build_info.c of an app binary. Programs built
 * on the runtime without an app (test drivers) have none. */
extern const struct ig_build_info ig_build_info;

#endif
