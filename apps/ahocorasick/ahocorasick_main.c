/* ahocorasick: Snort keyword matching as the P stage of R -> P -> T. */
#include "app.h"

int
main(int argc, char **argv)
{
	return pp_main(argc, argv, &ac_app);
}
