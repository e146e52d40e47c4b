/* The engine's counters as JSON (see stats_json.h). */
#include "stats_json.h"

json_t *
ids_tunnels_json(const struct ids_task_stats *s)
{
	json_t *o = json_object(), *bad = json_object();
	json_object_set_new(o, "vxlan", json_integer((json_int_t)s->tunneled[0]));
	json_object_set_new(o, "geneve", json_integer((json_int_t)s->tunneled[1]));
	for (int r = 1; r < IDS_TUN_N_ERR; r++)
		json_object_set_new(
			bad, ids_tunnel_err_name[r], json_integer((json_int_t)s->tunnel_errors[r]));
	json_object_set_new(o, "not_decapsulated", bad);
	return o;
}
