/* Signals: see pp_signal.h. */
#include "pp_signal.h"

#include <string.h>

volatile sig_atomic_t pp_stop_signals;

static void
on_stop(int sig)
{
	(void)sig;
	pp_stop_signals++;
}

void
pp_signal_request_stop(void)
{
	pp_stop_signals++;
}

void
pp_signal_setup(void (*on_usr1)(int sig))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if (on_usr1 != NULL) {
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
	}
}
