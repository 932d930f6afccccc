/* The service's entry point: the runtime's ig_main with the app that the
 * generated code exports (ig_api_app, build/gen/api.c). Programs that set
 * up a core themselves (tests/harness.h) link everything but this file. */
#include "operation.h"

int main(int argc, char **argv)
{
	return ig_main(argc, argv, &ig_api_app);
}
