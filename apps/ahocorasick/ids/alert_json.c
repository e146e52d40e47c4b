/* Alert JSON lines (see alert_json.h). */
#include "alert_json.h"

#include <stdlib.h>

#include <jansson.h>

char *
ids_alert_json(const struct ac_verifier *v, const struct ids_alert *a, const char *ts, bool blocked)
{
	char src[64], dst[64];
	ac_addr_str(a->src, src, sizeof(src));
	ac_addr_str(a->dst, dst, sizeof(dst));
	json_t *alert;
	if (a->rule == UINT32_MAX) {
		const struct ids_event_info *ev = &ids_event_info[a->event];
		alert = json_pack("{s:s, s:i, s:i, s:i, s:s, s:s, s:b}", "action",
			blocked ? "blocked" : "allowed", "gid", ev->gid, "signature_id", ev->sid,
			"rev", 1, "signature", ev->msg, "category", "decoder-event", "partial", 0);
	} else {
		const struct ac_vrule *vr = &v->rules[a->rule];
		const struct ac_rule *r = vr->rule;
		alert = json_pack("{s:s, s:i, s:I, s:I, s:s, s:s, s:b}", "action",
			blocked ? "blocked" : "allowed", "gid", 1, "signature_id",
			(json_int_t)r->sid, "rev", (json_int_t)r->rev, "signature",
			r->msg ? r->msg : "", "category", r->classtype, "partial",
			vr->partial || (a->flow & IDS_ALERT_PARTIAL) != 0);
	}
	const char *proto = a->ip_proto == 6 ? "TCP" : a->ip_proto == 17 ? "UDP" : "IP";
	json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:i, s:s, s:b, s:o}", "timestamp", ts,
		"event_type", "alert", "src_ip", src, "src_port", a->sport, "dest_ip", dst,
		"dest_port", a->dport, "proto", proto, "stream", a->stream != 0, "alert", alert);
	if (o != NULL && (a->flow & (IDS_ALERT_TRACKED | IDS_ALERT_UNTRACKED)) != 0) {
		/* The flow's side and state, as the rule's flow option saw them. */
		json_object_set_new(o, "direction",
			json_string(a->flow & AC_PF_FROM_CLIENT ? "to_server" : "to_client"));
		json_object_set_new(o, "flow_state",
			json_string(a->flow & IDS_ALERT_UNTRACKED     ? "untracked"
					: a->flow & AC_PF_ESTABLISHED ? "established"
								      : "not_established"));
	}
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}
