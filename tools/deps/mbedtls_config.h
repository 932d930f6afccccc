/* Placeholder: replaced by the mbedtls backend work. */
#include <mbedtls/config.h>
