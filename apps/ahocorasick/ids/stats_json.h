/* Parts of the engine's counters as JSON, the same in the app's stats and
 * in ac-ids --stats. */
#ifndef IDS_STATS_JSON_H
#define IDS_STATS_JSON_H

#include <jansson.h>

#include "ids.h"

/* {"vxlan": frames, "geneve": frames, "not_decapsulated": {why: frames}}:
 * frames whose VXLAN or Geneve tunnel was decapsulated (decode.h), and UDP
 * datagrams to a tunnel port judged as UDP, by the tunnel header's fault. */
json_t *ids_tunnels_json(const struct ids_task_stats *s);

#endif /* IDS_STATS_JSON_H */
