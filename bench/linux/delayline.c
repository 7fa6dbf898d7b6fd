/*
 * delayline: a user-space fixed delay between two network interfaces (the kernel of the
 * development machine has no sch_netem).  It bridges frames at layer 2 between IF_A and IF_B
 * through AF_PACKET sockets, holding every frame for DELAY_US microseconds in each direction
 * and forwarding frames in arrival order (one FIFO per direction: no reordering, no loss while
 * a FIFO has room; a full FIFO drops the frame and counts it).
 *
 * usage: delayline IF_A IF_B DELAY_US [SECONDS]
 * Runs until SIGTERM/SIGINT or SECONDS (default 3600) have passed; prints one line of counters
 * on exit: frames forwarded each way, dropped, and how late frames left (the largest lateness,
 * the mean, and how many left more than 1 ms late: the delay line's own timing noise).  Run it in the namespace that
 * holds both interfaces, which must be up and in promiscuous mode.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 8192
#define FRAME 2048

struct fifo {
    unsigned char data[SLOTS][FRAME];
    int len[SLOTS];
    int64_t due_ns[SLOTS];
    unsigned head, tail; /* head: next to send; tail: next free */
    long forwarded, dropped;
};

static volatile sig_atomic_t stop = 0;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_socket(const char *ifname, int *ifindex) {
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) { perror("socket"); exit(1); }
    *ifindex = (int)if_nametoindex(ifname);
    if (*ifindex == 0) { fprintf(stderr, "delayline: no interface %s\n", ifname); exit(1); }
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = *ifindex;
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) { perror("bind"); exit(1); }
    int one = 1;
#ifdef PACKET_IGNORE_OUTGOING
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
#endif
    int buf = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf);
    (void)one;
    return fd;
}

/* Read every frame waiting on fd into q, stamped with its due time. */
static void drain(int fd, struct fifo *q, int64_t delay_ns) {
    for (;;) {
        unsigned char tmp[FRAME];
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, tmp, sizeof tmp, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0) return;
        if (from.sll_pkttype == PACKET_OUTGOING) continue;
        int64_t t = now_ns();
        if (q->tail - q->head >= SLOTS) { q->dropped++; continue; }
        unsigned i = q->tail % SLOTS;
        memcpy(q->data[i], tmp, (size_t)n);
        q->len[i] = (int)n;
        q->due_ns[i] = t + delay_ns;
        q->tail++;
    }
}

/* Send every frame of q that is due; return the time of the next due frame or -1. */
static int64_t late_sum_ns = 0;
static long late_over_1ms = 0;

static int64_t release(int fd, int ifindex, struct fifo *q, int64_t *late_max) {
    struct sockaddr_ll to;
    memset(&to, 0, sizeof to);
    to.sll_family = AF_PACKET;
    to.sll_ifindex = ifindex;
    to.sll_halen = ETH_ALEN;
    while (q->head != q->tail) {
        unsigned i = q->head % SLOTS;
        int64_t t = now_ns();
        if (q->due_ns[i] > t) return q->due_ns[i];
        if (t - q->due_ns[i] > *late_max) *late_max = t - q->due_ns[i];
        late_sum_ns += t - q->due_ns[i];
        if (t - q->due_ns[i] > 1000000) late_over_1ms++;
        memcpy(to.sll_addr, q->data[i], ETH_ALEN);
        if (sendto(fd, q->data[i], (size_t)q->len[i], 0, (struct sockaddr *)&to, sizeof to) < 0) {
            if (errno == ENOBUFS || errno == EAGAIN) return t + 20000; /* retry in 20 us */
            q->dropped++;
        } else {
            q->forwarded++;
        }
        q->head++;
    }
    return -1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: delayline IF_A IF_B DELAY_US [SECONDS]\n");
        return 2;
    }
    int64_t delay_ns = atoll(argv[3]) * 1000LL;
    int64_t end_ns = now_ns() + (int64_t)(argc > 4 ? atof(argv[4]) : 3600.0) * 1000000000LL;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    int ia, ib;
    int fa = open_socket(argv[1], &ia);
    int fb = open_socket(argv[2], &ib);
    struct fifo *ab = calloc(1, sizeof *ab), *ba = calloc(1, sizeof *ba);
    if (!ab || !ba) { perror("calloc"); return 1; }
    int64_t late_max = 0;
    struct pollfd p[2] = {{fa, POLLIN, 0}, {fb, POLLIN, 0}};
    while (!stop && now_ns() < end_ns) {
        int64_t n1 = release(fb, ib, ab, &late_max);
        int64_t n2 = release(fa, ia, ba, &late_max);
        int64_t next = n1 < 0 ? n2 : (n2 < 0 ? n1 : (n1 < n2 ? n1 : n2));
        struct timespec ts, *tsp = NULL;
        if (next >= 0) {
            int64_t wait = next - now_ns();
            if (wait < 0) wait = 0;
            ts.tv_sec = wait / 1000000000LL;
            ts.tv_nsec = wait % 1000000000LL;
            tsp = &ts;
        } else {
            ts.tv_sec = 0;
            ts.tv_nsec = 200000000L; /* wake up to check the end time */
            tsp = &ts;
        }
        int r = ppoll(p, 2, tsp, NULL);
        if (r < 0 && errno != EINTR) { perror("ppoll"); break; }
        if (r > 0) {
            if (p[0].revents & POLLIN) drain(fa, ab, delay_ns);
            if (p[1].revents & POLLIN) drain(fb, ba, delay_ns);
        }
    }
    long sent = ab->forwarded + ba->forwarded;
    printf("delayline a->b %ld b->a %ld dropped %ld late_max_us %ld late_mean_us %.1f "
           "late_over_1ms %ld\n", ab->forwarded, ba->forwarded, ab->dropped + ba->dropped,
           (long)(late_max / 1000), sent ? (double)late_sum_ns / sent / 1000.0 : 0.0,
           late_over_1ms);
    return 0;
}
