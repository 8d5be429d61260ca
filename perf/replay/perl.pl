#!/usr/bin/perl
# Replay of 60,000 MESSAGE frames (parsed as Net::Stomp 0.61 does: header regex, split, Frame->new)
# into copies of the receive loop's handler (loop) and the stock consumer's on_message record
# keeping (hashes: what it keeps, every frame's headers hash in an array per message; flat: a
# flat list of timestamp, the needed headers joined, body, tried on 2026-11-23 and dropped:
# 6 B loop 6.67 / flat 7.50 / hashes 7.50 us, 1 KiB 7.17 / 11.50 / 8.17). Since commit
# fe422b2 the consumer keeps two strings. `published` is its on_message now: a body of the
# --size it was started with compared with the contract's filler on arrival and kept as its
# first 6 bytes, another over 256 bytes summarised, the length at the end of the header line;
# `raw` as in e956b4f (every body up to --size appended raw); `strings` as from b3299c8 (a body
# over 256 bytes summarised on arrival through a sub, a kept one through pack); `strings4k`
# before that (bodies up to 4 KiB kept). Tried on 2026-11-24 on the way (1 KiB, loop
# 6.89-7.24 us): `keep` (strings, every body kept) 7.94, `inline` (strings without the sub
# call) 7.96, `tail` (the CRC in the line) 8.08, `nopack` (raw without the branch) 7.67-7.74,
# `strings` 8.23-8.30.
# A replay reuses its memory: page faults are not in these figures (28955a4:docs/perf.md).
# CPU per message from the process's CPU clock, alternating, median of 8.
# Run: perl perf/replay/perl.pl loop published raw strings
use strict; use warnings; use Time::HiRes qw(gettimeofday clock_gettime CLOCK_PROCESS_CPUTIME_ID);
use Net::Stomp::Frame; use Compress::Raw::Zlib ();
my $N = 60000;
sub cpu { clock_gettime(CLOCK_PROCESS_CPUTIME_ID) }
sub frames { my ($size) = @_; my @f;
  for my $i (0 .. $N - 1) {
    my $body = sprintf('%06d', $i % 1000000) . ('x' x ($size > 6 ? $size - 6 : 0));
    push @f, "MESSAGE\ncontent-length:" . length($body) . "\nexpires:0\ndestination:/queue/q\nsubscription:sub-0\npriority:4\nbb_producer:p0\nbb_seq:$i\nbb_burst:0\nbb_sent_ns:" . (1763800000000000000 + $i) . "\nbb_nonce:abcdef0123456789\nbb_crc32:0badf00d\nmessage-id:ID:host-1234-1:1:1:1:$i\ntimestamp:1763800000000\n\n$body\0";
  } return \@f }
# parse like Net::Stomp: headers regex + split into hash, Frame->new
sub parse { my ($s) = @_; $s =~ s/^\n*([^\n].*?)\n\n//s; my ($cmd, @h) = split /\n/, $1; my %h = map { split /:/, $_, 2 } @h;
  return Net::Stomp::Frame->new({ command => $cmd, headers => \%h, body => substr($s, 0, -1) }); }
my (@raw, $now, $seen, $foreign, $n, $t0, $t1);
my ($heads, $bodies) = ('', '');
my $KEEP_BODY = 256; my ($SIZE, $FILL) = (0, '');  # the consumer's, for frames of the size replayed (below)
my @KEYS = qw(bb_producer bb_seq bb_burst bb_sent_ns redelivered destination bb_nonce bb_crc32);
my %cb = (
 loop => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $t1 = $s * 1000000000 + $us * 1000; $t0 //= $t1;
   my ($h, $body) = ($f->headers, $f->body); $foreign++ unless defined $h->{bb_seq} && length $body; $n++; },
 hashes => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000; my $h = $f->headers; my $body = $f->body;
   push @raw, length($body) <= 4096 ? [$now, $h, $body] : [$now, $h, undef, length($body), Compress::Raw::Zlib::crc32($body), substr($body, 0, 6)];
   $seen++ if defined $h->{bb_seq}; },
 strings => sub { stock_record($_[0], 256) },
 keep => sub { stock_record($_[0], 1e9) },
 inline => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body;
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\n"; }
  $bodies .= length($body) <= 256 ? pack('a N/a*', 'b', $body)
    : pack('a N N a6', 's', length $body, Compress::Raw::Zlib::crc32($body), substr($body, 0, 6));
  $seen++ if defined $h->{bb_seq}; },
 tail => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body; my $n = length $body; my $tail;
  if ($n <= 256) { $tail = $n; $bodies .= $body }
  else { $tail = "$n/" . Compress::Raw::Zlib::crc32($body); $bodies .= substr($body, 0, 6) }
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\t$tail\n"; }
  $seen++ if defined $h->{bb_seq}; },
 raw => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body; my $n = length $body;
  if ($n <= $KEEP_BODY) { $bodies .= $body }
  else { $bodies .= pack('N a6', Compress::Raw::Zlib::crc32($body), $body); $n = -$n }
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\t$n\n"; }
  $seen++ if defined $h->{bb_seq}; },
 published => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body; my $n = length $body;
  if ($n <= 256) { $bodies .= $body }
  elsif ($n == $SIZE && substr($body, 6) eq $FILL) { $bodies .= substr($body, 0, 6); $n = "=$n" }
  else { $bodies .= pack('N a6', Compress::Raw::Zlib::crc32($body), $body); $n = -$n }
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\t$n\n"; }
  $seen++ if defined $h->{bb_seq}; },
 nopack => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body;
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\t" . length($body) . "\n"; }
  $bodies .= $body;
  $seen++ if defined $h->{bb_seq}; },
 strings4k => sub { stock_record($_[0], 4096) },
 flat => sub { my ($f) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000; my $h = $f->headers; my $body = $f->body;
   no warnings 'uninitialized';
   push @raw, $now, join("\n", @$h{@KEYS}), length($body) <= 4096 ? $body : [length($body), Compress::Raw::Zlib::crc32($body), substr($body, 0, 6)];
   $seen++ if defined $h->{bb_seq}; },
);
# clients/perl/consumer.pl's on_message, auto mode (what it keeps; no acks)
sub body_facts { (length $_[0], Compress::Raw::Zlib::crc32($_[0]), substr($_[0], 0, 6)) }
sub stock_record {
  my ($f, $keep) = @_; my ($s, $us) = gettimeofday(); $now = $s * 1000000000 + $us * 1000;
  my $h = $f->headers; my $body = $f->body;
  { no warnings 'uninitialized';
    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t"
      . "$h->{redelivered}\t$h->{destination}\t"
      . (exists $h->{bb_nonce} ? $h->{bb_nonce} : '-') . "\t"
      . (exists $h->{bb_crc32} ? $h->{bb_crc32} : '-') . "\n"; }
  $bodies .= length($body) <= $keep ? pack('a N/a*', 'b', $body) : pack('a N N a6', 's', body_facts($body));
  $seen++ if defined $h->{bb_seq};
}
my @which = @ARGV;
for my $size (6, 1024) {
  my $fr = frames($size);
  $KEEP_BODY = $size > 256 ? $size : 256; ($SIZE, $FILL) = ($size, 'x' x ($size - 6));
  my %res;
  for my $rep (0 .. 8) {
    for my $k ($rep % 2 ? reverse @which : @which) {
      @raw = (); $n = 0; ($heads, $bodies) = ('', ''); my $cb = $cb{$k};
      my $c0 = cpu();
      for my $s (@$fr) { $cb->(parse($s)) }
      my $dt = cpu() - $c0;
      push @{$res{$k}}, $dt / $N * 1e6 if $rep;
    }
  }
  print "$size ", join(' ', map { my @v = sort { $a <=> $b } @{$res{$_}}; sprintf('%s=%.2f', $_, $v[@v / 2]) } @which), "\n";
}
