#!/usr/bin/perl
# burstbench Pi worker (Perl, Net::Stomp): Leibniz chunks from a work queue, partial sums to a
# results queue. The format: the "Pi workers" section of clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Connect;
use Options;

my %VALUE = map { $_ => 1 } qw(url work results id prefetch user password connect-timeout);

sub usage {
    return <<"EOT";
usage: pi-worker.pl --url stomp://HOST:PORT --work QUEUE --results QUEUE [options]
burstbench Pi worker (Perl, Net::Stomp $Net::Stomp::VERSION); see clients/contract.md
  --url URL                stomp://HOST:PORT or stomp+ssl://HOST:PORT (required)
  --work QUEUE             queue the work messages come from (required)
  --results QUEUE          queue the partial sums go to (required)
  --id ID                  worker id [A-Za-z0-9_.-]{1,64} [w1]
  --prefetch N             activemq.prefetchSize [1000]
  --user U --password P    broker credentials
  --connect-timeout S      seconds [10]
  --version                print versions as JSON
  --help                   this text
EOT
}

sub parse {
    my @argv = @_;
    for (@argv) {
        if ($_ eq '--help' || $_ eq '-h') { print usage(); exit 0 }
        if ($_ eq '--version') { print Options::version_line(), "\n"; exit 0 }
    }
    my %o = (id => 'w1', prefetch => 1000, 'connect-timeout' => 10);
    read_options(\@argv, \%VALUE, \%o);
    for (qw(url work results)) { fail(2, "missing required option --$_") unless defined $o{$_} }
    for (qw(work results)) {
        fail(2, "bad queue name for --$_: '$o{$_}'") unless $o{$_} =~ /^[A-Za-z0-9_.:>*\$-]{1,200}\z/;
    }
    fail(2, "--prefetch must be an integer >= 1: '$o{prefetch}'")
      unless $o{prefetch} =~ /^\d+\z/ && $o{prefetch} >= 1;
    fail(2, "--connect-timeout must be a number > 0: '$o{'connect-timeout'}'")
      unless $o{'connect-timeout'} =~ /^(?:\d+(?:\.\d*)?|\.\d+)\z/ && $o{'connect-timeout'} > 0;
    fail(2, "--id must match [A-Za-z0-9_.-]{1,64}: '$o{id}'") unless $o{id} =~ /^[A-Za-z0-9_.-]{1,64}\z/;
    fail(2, "--user and --password must be given together")
      if defined $o{user} != defined $o{password};
    parse_url(\%o);
    return \%o;
}

# Sum of (-1)^k / (2k+1) for k in [start, start+n), term by term in that order.
sub chunk_sum {
    my ($start, $n) = @_;
    my $s = 0.0;
    for my $k ($start .. $start + $n - 1) {
        my $term = 1.0 / (2.0 * $k + 1.0);
        if ($k & 1) { $s -= $term } else { $s += $term }
    }
    return $s;
}

my $o = parse(@ARGV);
my $id = $o->{id};
my $stop = 0;
my $stomp = start($o, \$stop);
my ($chunks, $foreign) = (0, 0);

sub on_message {
    my ($f) = @_;
    my $h = $f->{headers};
    my $cmd = $h->{pi_cmd} // '';
    if ($cmd eq 'stop') { $stop = 1; return }
    no warnings 'uninitialized';
    unless ($cmd eq 'work' && $h->{pi_chunk} =~ /^\d{1,18}\z/ && $h->{pi_start} =~ /^\d{1,18}\z/
            && $h->{pi_elements} =~ /^\d{1,18}\z/ && $h->{pi_elements} >= 1) {
        $foreign++;
        return;
    }
    my $s = chunk_sum(0 + $h->{pi_start}, 0 + $h->{pi_elements});
    $stomp->send({ destination => "/queue/$o->{results}", body => sprintf('%.17g', $s),
                   pi_chunk => $h->{pi_chunk}, pi_worker => $id });
    $chunks++;
}

my $rc = eval {
    $stomp->subscribe({ destination => "/queue/$o->{work}", id => 'work', ack => 'auto',
                        'activemq.prefetchSize' => $o->{prefetch}, receipt => "$id-subscribed" });
    wait_receipt($stomp, "$id-subscribed", $o->{'connect-timeout'}, \&on_message)
      or die "no receipt for SUBSCRIBE\n";
    emit('ready', id => $id, role => 'pi-worker');
    while (!$stop) {
        my $f = $stomp->receive_frame({ timeout => 0.5 });
        unless ($f) {
            die "connection to the broker lost\n" unless defined fileno($stomp->socket);
            next;
        }
        if ($f->{command} eq 'MESSAGE') { on_message($f) }
        elsif ($f->{command} eq 'ERROR') {
            die 'broker error: ' . ($f->{headers}{message} // '') . ' ' . ($f->{body} // '') . "\n";
        }
    }
    # work auto-acknowledged but not yet computed is dropped: a stop comes after all work
    graceful_disconnect($stomp, 10);
    emit('done', id => $id, chunks => $chunks, foreign => $foreign);
    1;
};
Common::fail(1, $@ || 'failed') unless $rc;
exit 0;
