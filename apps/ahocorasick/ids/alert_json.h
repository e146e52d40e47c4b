/* One alert as a JSON line in the spirit of Suricata's eve.json (the app's
 * --alert-log and ac-ids print the same): timestamp, addresses, ports,
 * protocol, the flow's side and state, whether it was found on a PDU
 * rebuilt from the stream, and the rule (or the decoder event). */
#ifndef IDS_ALERT_JSON_H
#define IDS_ALERT_JSON_H

#include <stdbool.h>

#include "ids.h"

/* A malloc'd line without its newline, NULL when out of memory.  ts: the
 * timestamp's text. */
char *ids_alert_json(
	const struct ac_verifier *v, const struct ids_alert *a, const char *ts, bool blocked);

#endif /* IDS_ALERT_JSON_H */
