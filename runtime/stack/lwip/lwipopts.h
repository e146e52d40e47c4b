/* lwIP's options for runtime/stack, when lwIP is built from Debian's
 * source package (meson -Dlwip_source=DIR; tools/setup.sh fetches it).
 * What differs from Debian's liblwip (built for the Hurd) and why:
 *   NO_SYS 1          one thread (R) runs the raw API and the timers: no
 *                     tcpip thread, no core locking, no semaphores
 *   static pools      pcbs, segments and the heap from fixed pools, not
 *                     malloc per segment and per outgoing pbuf
 *   TCP_WND 256 KiB   a client keeps sending while P runs on R's context
 *                     (Debian: 64 KiB); window scale 3
 *   no sockets, netconn, UDP, IPv6, DHCP: the raw TCP API over IPv4 only
 * Checksums are checked and made in software as before: the veth and
 * tap ports have no offload. */
#ifndef PP_LWIPOPTS_H
#define PP_LWIPOPTS_H

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0
#define LWIP_TIMERS 1
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_NETIF_API 0

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
#define IP_FORWARD 0
#define IP_REASSEMBLY 0 /* TCP from a kernel client is never fragmented (DF, MSS) */
#define IP_FRAG 0
#define LWIP_STATS 0

/* Memory: fixed pools and a heap for PBUF_RAM (segments written with
 * TCP_WRITE_FLAG_COPY, ACK and control headers). */
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0
#define MEM_ALIGNMENT 8
#define MEM_SIZE (4 * 1024 * 1024)
/* pp_stack's --max-conns goes to 1024 per instance, and pcbs linger in
 * TIME_WAIT; lwIP reuses the oldest TIME_WAIT pcb when the pool is dry. */
#define MEMP_NUM_TCP_PCB 4096
#define MEMP_NUM_TCP_PCB_LISTEN 8
/* Out-of-order segments of every connection's window, and what is sent. */
#define MEMP_NUM_TCP_SEG 16384
#define MEMP_NUM_PBUF 1024
/* Received frames are mbufs (custom pbufs), not lwIP's PBUF_POOL: the
 * window's check against that pool does not apply. */
#define PBUF_POOL_SIZE 64
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1
#define LWIP_SUPPORT_CUSTOM_PBUF 1

#define TCP_MSS 1460
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 3
#define TCP_WND (256 * 1024)
#define TCP_SND_BUF (64 * 1024)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + TCP_MSS - 1) / TCP_MSS)
#define TCP_QUEUE_OOSEQ 1
#define TCP_LISTEN_BACKLOG 1
#define SO_REUSE 1
#define LWIP_TCP_KEEPALIVE 0
#define LWIP_NETIF_TX_SINGLE_PBUF 1
#define TCP_OVERSIZE TCP_MSS
#define LWIP_CHKSUM_ALGORITHM 3
#define LWIP_CALLBACK_API 1

#endif
