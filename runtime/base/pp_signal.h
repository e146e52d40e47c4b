/* Signals, shared by the runtime and pp-tgen: SIGINT and SIGTERM count
 * stop requests, SIGPIPE is ignored so that a write to a pipe whose reader
 * went away fails with EPIPE (the program then ends cleanly, with a message)
 * instead of killing the process. */
#ifndef PP_SIGNAL_H
#define PP_SIGNAL_H

#include <signal.h>

/* SIGINT/SIGTERM received so far (plus pp_signal_request_stop calls).
 * Polled by the main loops; a second one may mean "stop now". */
extern volatile sig_atomic_t pp_stop_signals;

/* Installs the handlers (no SA_RESTART: a blocking read such as --serve's
 * getline ends on a stop signal).  on_usr1, when not NULL, handles SIGUSR1. */
void pp_signal_setup(void (*on_usr1)(int sig));

/* Counts one stop request, as a signal would. */
void pp_signal_request_stop(void);

#endif
