/* BPF filter expressions (libpcap syntax) compiled for Ethernet frames. */
#ifndef AN_FILTER_H
#define AN_FILTER_H

#include <pcap/pcap.h>
#include <stddef.h>

/* Compile `expr` with pcap_compile on a dead DLT_EN10MB handle.  On error
 * returns -1 and writes libpcap's message to err.  The program is run on the
 * fast path with bpf_filter(), which neither allocates nor locks. */
int an_filter_compile(const char *expr, struct bpf_program *prog, char *err, size_t err_len);

#endif
