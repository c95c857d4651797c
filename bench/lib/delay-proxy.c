// A TCP proxy that adds a fixed one-way delay in each direction, for the
// network-latency benchmark (bench/netlat.mjs). This kernel has no sch_netem,
// so `tc netem` cannot add the delay; this does it in user space, in C, so
// that the proxy itself is not the bottleneck (a Node proxy was).
//
//   delay-proxy LISTEN_PORT TARGET_PORT DELAY_US
//
// Listens on 127.0.0.1:LISTEN_PORT (0: any free port) and connects every
// accepted client to 127.0.0.1:TARGET_PORT. Each chunk read from one side is
// written to the other DELAY_US microseconds after it arrived, in order (a
// per-direction FIFO of chunks with their due time; a timerfd armed for the
// earliest due chunk). A round trip therefore gains 2 x DELAY_US. Prints
// "listening PORT" on stdout once ready. Exits on SIGTERM/SIGINT, and when
// its parent dies (PR_SET_PDEATHSIG), so it never outlives the benchmark.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define READ_MAX 65536
#define QUEUE_HIGH (4 << 20) // stop reading a side while 4 MiB wait to be written

typedef struct chunk {
  struct chunk *next;
  int64_t due_ns;
  size_t len, off;
  int eof; // the source closed: shut down the destination's write side when due
  char data[];
} chunk;

struct conn;

// One direction: bytes read from `src` wait in the FIFO, then go to `dst`.
typedef struct dir {
  int src, dst;
  chunk *head, *tail;
  size_t queued;
  int eof_read; // src sent EOF (queued as an eof chunk)
  int blocked;  // dst answered EAGAIN: wait for EPOLLOUT
  int done;     // EOF forwarded
} dir;

typedef struct endpoint {
  struct conn *conn;
  int side;     // 0: client socket, 1: server socket
  uint32_t mask; // current epoll interest
} endpoint;

typedef struct conn {
  struct conn *prev, *next;
  int fd[2];
  dir d[2]; // d[0]: client -> server, d[1]: server -> client
  endpoint ep[2];
  int closed;
} conn;

static int ep_fd, timer_fd, listen_fd, signal_fd;
static int64_t delay_ns;
static int target_port;
static conn *conns, *graveyard;
static int64_t armed_ns = 0; // absolute due time the timer is armed for, 0: disarmed
static char LISTEN_TAG, TIMER_TAG, SIGNAL_TAG;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) die("fcntl");
}

// The epoll interest of fd `side`: read while its outgoing FIFO has room and
// it has not sent EOF; write while the FIFO towards it is blocked.
static void update_interest(conn *c, int side) {
  dir *out = &c->d[side];
  dir *in = &c->d[1 - side];
  uint32_t mask = 0;
  if (!out->eof_read && out->queued < QUEUE_HIGH) mask |= EPOLLIN;
  if (in->blocked) mask |= EPOLLOUT;
  endpoint *e = &c->ep[side];
  if (mask == e->mask) return;
  struct epoll_event ev = {.events = mask, .data.ptr = e};
  if (epoll_ctl(ep_fd, EPOLL_CTL_MOD, c->fd[side], &ev) < 0) die("epoll_ctl mod");
  e->mask = mask;
}

static void free_queue(dir *d) {
  while (d->head) {
    chunk *n = d->head->next;
    free(d->head);
    d->head = n;
  }
  d->tail = NULL;
  d->queued = 0;
}

// Closes both sockets at once. The struct is freed at the end of the loop
// iteration: later events of the same epoll batch may still point at it.
static void close_conn(conn *c) {
  if (c->closed) return;
  c->closed = 1;
  for (int s = 0; s < 2; s++) {
    epoll_ctl(ep_fd, EPOLL_CTL_DEL, c->fd[s], NULL);
    close(c->fd[s]);
    free_queue(&c->d[s]);
  }
  if (c->prev) c->prev->next = c->next;
  else conns = c->next;
  if (c->next) c->next->prev = c->prev;
  c->next = graveyard;
  graveyard = c;
}

// Writes every due chunk at the head of d, in order. -1: the pair failed.
static int flush_dir(dir *d, int64_t now) {
  while (d->head && d->head->due_ns <= now) {
    chunk *h = d->head;
    if (h->eof) {
      shutdown(d->dst, SHUT_WR);
      d->done = 1;
    } else {
      while (h->off < h->len) {
        ssize_t n = send(d->dst, h->data + h->off, h->len - h->off, MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) {
            d->blocked = 1;
            return 0;
          }
          return -1;
        }
        h->off += (size_t)n;
        d->queued -= (size_t)n;
      }
    }
    d->head = h->next;
    if (!d->head) d->tail = NULL;
    free(h);
  }
  d->blocked = 0;
  return 0;
}

// Reads what fd `side` has and queues it for the other side, due in delay_ns.
static int read_side(conn *c, int side, int64_t now) {
  static char buf[READ_MAX];
  dir *d = &c->d[side];
  while (!d->eof_read && d->queued < QUEUE_HIGH) {
    ssize_t n = recv(c->fd[side], buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      if (errno == EINTR) continue;
      return -1; // reset: drop the pair, as the network would
    }
    chunk *ch = malloc(sizeof(chunk) + (size_t)n);
    if (!ch) die("malloc");
    ch->next = NULL;
    ch->due_ns = now + delay_ns;
    ch->len = (size_t)n;
    ch->off = 0;
    ch->eof = n == 0;
    if (n) memcpy(ch->data, buf, (size_t)n);
    if (d->tail) d->tail->next = ch;
    else d->head = ch;
    d->tail = ch;
    d->queued += (size_t)n;
    if (n == 0) d->eof_read = 1;
  }
  return 0;
}

static void accept_all(void) {
  for (;;) {
    int cfd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      die("accept");
    }
    // A blocking connect on loopback completes at once; non-blocking after.
    int sfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)target_port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (sfd < 0 || connect(sfd, (struct sockaddr *)&to, sizeof to) < 0) {
      perror("connect to target");
      if (sfd >= 0) close(sfd);
      close(cfd);
      continue;
    }
    set_nonblock(sfd);
    int one = 1;
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = calloc(1, sizeof(conn));
    if (!c) die("calloc");
    c->fd[0] = cfd;
    c->fd[1] = sfd;
    c->d[0].src = cfd;
    c->d[0].dst = sfd;
    c->d[1].src = sfd;
    c->d[1].dst = cfd;
    for (int s = 0; s < 2; s++) {
      c->ep[s].conn = c;
      c->ep[s].side = s;
      c->ep[s].mask = EPOLLIN;
      struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->ep[s]};
      if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, c->fd[s], &ev) < 0) die("epoll_ctl add");
    }
    c->next = conns;
    if (conns) conns->prev = c;
    conns = c;
  }
}

// Arms the timer for the earliest chunk not yet due (0: nothing waits).
static void arm_timer(int64_t now) {
  int64_t next = 0;
  for (conn *c = conns; c; c = c->next)
    for (int s = 0; s < 2; s++) {
      dir *d = &c->d[s];
      if (d->head && !d->blocked && d->head->due_ns > now && (!next || d->head->due_ns < next))
        next = d->head->due_ns;
    }
  if (next == armed_ns) return;
  struct itimerspec its = {0};
  its.it_value.tv_sec = next / 1000000000;
  its.it_value.tv_nsec = next % 1000000000;
  if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) die("timerfd_settime");
  armed_ns = next;
}

static void add_tag(int fd, void *tag) {
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
  if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &ev) < 0) die("epoll_ctl add");
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: delay-proxy LISTEN_PORT TARGET_PORT DELAY_US\n");
    return 2;
  }
  int listen_port = atoi(argv[1]);
  target_port = atoi(argv[2]);
  delay_ns = (int64_t)atoll(argv[3]) * 1000;
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0) die("prctl");
  prctl(PR_SET_TIMERSLACK, 1UL); // wake at the due time, not up to 50 us later
  if (getppid() != parent) return 1; // the parent died before prctl

  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0) die("sigprocmask");
  signal_fd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signal_fd < 0) die("signalfd");

  listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) die("socket");
  int one = 1;
  setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons((uint16_t)listen_port)};
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK); // 127.0.0.1 only
  if (bind(listen_fd, (struct sockaddr *)&at, sizeof at) < 0) die("bind");
  if (listen(listen_fd, 256) < 0) die("listen");
  socklen_t len = sizeof at;
  if (getsockname(listen_fd, (struct sockaddr *)&at, &len) < 0) die("getsockname");

  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (timer_fd < 0) die("timerfd_create");
  ep_fd = epoll_create1(EPOLL_CLOEXEC);
  if (ep_fd < 0) die("epoll_create1");
  add_tag(listen_fd, &LISTEN_TAG);
  add_tag(timer_fd, &TIMER_TAG);
  add_tag(signal_fd, &SIGNAL_TAG);
  printf("listening %d\n", ntohs(at.sin_port));
  fflush(stdout);

  struct epoll_event evs[128];
  for (;;) {
    int n = epoll_wait(ep_fd, evs, 128, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    int64_t now = now_ns();
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &LISTEN_TAG) {
        accept_all();
      } else if (tag == &TIMER_TAG) {
        uint64_t ticks;
        (void)!read(timer_fd, &ticks, sizeof ticks);
        armed_ns = 0;
      } else if (tag == &SIGNAL_TAG) {
        return 0;
      } else {
        endpoint *e = tag;
        conn *c = e->conn;
        if (c->closed) continue;
        uint32_t got = evs[i].events;
        if (got & EPOLLOUT) c->d[1 - e->side].blocked = 0;
        if ((got & (EPOLLIN | EPOLLHUP | EPOLLERR)) && read_side(c, e->side, now) < 0) {
          close_conn(c);
          continue;
        }
        if (got & (EPOLLERR | EPOLLHUP)) close_conn(c);
      }
    }
    // Forward what is due, in order; close pairs whose both sides finished.
    for (conn *c = conns, *next; c; c = next) {
      next = c->next;
      int failed = 0;
      for (int s = 0; s < 2 && !failed; s++)
        if (!c->d[s].blocked && flush_dir(&c->d[s], now) < 0) failed = 1;
      if (failed || (c->d[0].done && c->d[1].done)) {
        close_conn(c);
        continue;
      }
      update_interest(c, 0);
      update_interest(c, 1);
    }
    arm_timer(now);
    while (graveyard) {
      conn *g = graveyard;
      graveyard = g->next;
      free(g);
    }
  }
}
