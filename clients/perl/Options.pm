package Options;
# The contract's options for the Net::Stomp programs (clients/contract.md, "Arguments").
use strict;
use warnings;
use Getopt::Long ();
use Net::Stomp;
use Exporter 'import';
use Common;

our @EXPORT = qw(parse_args read_options parse_url);

# The contract's options come from clients/options.tsv, clients/options.yaml resolved for each
# client and role: Getopt::Long over its rows, each value checked against its row (bounds,
# pattern, choices); what this client cannot do is checked after, in parse_args.
my $TABLE = do { (my $d = __FILE__) =~ s{[^/]*\z}{}; ($d || './') . '../options.tsv' };

# The table's rows for $role of this client: hashes of option, type, required, default...
sub table {
    my ($role) = @_;
    open(my $fh, '<', $TABLE) or die "cannot read $TABLE: $!\n";
    my @head;
    my @rows;
    while (my $l = <$fh>) {
        next if $l =~ /^#/;
        chomp $l;
        my @f = split /\t/, $l, -1;
        unless (@head) { @head = @f; next }
        my %r;
        @r{@head} = @f;
        push @rows, \%r if $r{client} eq $Common::CLIENT && $r{role} eq $role;
    }
    return @rows;
}

# $value for row $r's option, checked (exit 2 naming the option when bad).
sub checked {
    my ($r, $value) = @_;
    my $bad = sub { fail(2, "--$r->{option} $_[0]: '$value'") };
    my $type = $r->{type};
    if ($type eq 'int' || $type eq 'number') {
        $bad->($type eq 'int' ? 'needs an integer' : 'needs a number')
          unless $value =~ ($type eq 'int' ? qr/\A-?[0-9]+\z/ : qr/\A-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\z/);
        my ($min, $max, $above) = @$r{qw(min max above)};
        $bad->($above ne '' ? "must be > $above and <= $max" : "must be $min..$max")
          if ($min ne '' && $value < $min) || ($max ne '' && $value > $max)
            || ($above ne '' && $value <= $above);
        return $value;
    }
    my @items = $type eq 'queues' || $type eq 'urls' ? split(/,/, $value, -1) : ($value);
    my @choices = split /,/, $r->{choices};
    if ($type eq 'url' || $type eq 'urls') {
        $bad->('must be an address in ' . join(', ', @choices))
          if grep { !/\A(?:$r->{pattern})\z/ } @items;
    } elsif (@choices && $type eq 'string') {
        $bad->('must be one of ' . join(', ', @choices)) unless grep { $_ eq $value } @choices;
    } elsif ($r->{pattern} ne '') {
        $bad->("must match $r->{pattern}") if grep { !/\A(?:$r->{pattern})\z/ } @items;
    }
    return $value;
}

sub usage {
    my ($role) = @_;
    my $lines = join '', map {
        sprintf("  %-26s %s\n", "--$_->{option}" . ($_->{type} ne 'flag' ? ' ' . uc $_->{type} : ''),
                $_->{help});
    } table($role);
    return "usage: $role.pl --url stomp://HOST:PORT --destinations Q1[,Q2...] [options]\n"
      . "burstbench $role (Perl, Net::Stomp $Net::Stomp::VERSION); see clients/contract.md\n"
      . $lines;
}

sub version_line {
    my $v = sprintf('%vd', $^V);
    return qq({"client":"$Common::CLIENT","library":"Net::Stomp $Net::Stomp::VERSION","runtime":"perl $v"});
}

sub parse_args {
    my ($role, @argv) = @_;
    my $producer = $role eq 'producer';
    my @rows = table($role);
    my %o;
    my @problems;
    {
        local $SIG{__WARN__} = sub { push @problems, $_[0] };
        Getopt::Long::Configure(qw(no_auto_abbrev no_ignore_case no_bundling prefix_pattern=--));
        Getopt::Long::GetOptionsFromArray(\@argv, \%o,
            map { $_->{type} eq 'flag' ? $_->{option} : "$_->{option}=s" } @rows)
          or fail(2, $problems[0] // 'bad arguments');
    }
    fail(2, "unexpected argument '$argv[0]'") if @argv;
    if ($o{help})    { print usage($role); exit 0 }
    if ($o{version}) { print version_line(), "\n"; exit 0 }
    for my $r (@rows) {
        my $name = $r->{option};
        if ($r->{type} eq 'flag') { $o{$name} //= 0; next }
        $o{$name} //= $r->{default} if $r->{default} ne '';
        if (defined $o{$name}) { checked($r, $o{$name}) }
        elsif ($r->{required}) { fail(2, "missing required option --$name") }
    }
    # the password from the environment keeps it off the process list
    $o{password} //= $ENV{BB_PASSWORD} if defined $o{user};
    fail(2, "--user and --password (or BB_PASSWORD) must be given together")
      if defined $o{user} != defined $o{password};
    fail(2, "--cert and --key must be given together") if defined $o{cert} != defined $o{key};
    for (grep { defined $o{$_} } qw(ca cert key)) {
        fail(2, "--$_: cannot read $o{$_}") unless -r $o{$_};
    }
    $o{dests} = [ split /,/, $o{destinations}, -1 ];
    parse_url(\%o);
    # Net::Stomp speaks TLS through IO::Socket::SSL, which it loads only when it connects
    # (and then retries until the timeout): a missing module is a bad request here, at once.
    if ($o{ssl} && !eval { require IO::Socket::SSL; 1 }) {
        fail(2, "stomp+ssl:// needs the Perl module IO::Socket::SSL, which is not installed "
              . "(Debian: apt-get install libio-socket-ssl-perl; or run ./bench setup)");
    }
    if ($o{connections} > 1) {
        # each slot writes a file of its own: PATH with {id} replaced by the slot's id
        fail(2, "--records must contain {id} with --connections > 1 (each slot writes its own file): "
              . "'$o{records}'") if defined $o{records} && index($o{records}, '{id}') < 0;
        fail(2, "--failover with --connections > 1 is not supported by this client") if $o{hosts};
        # a socket a connection, then stdin/out/err, the records files, Perl's own (core Perl
        # cannot raise the limit: the harness gives its children the hard one)
        my ($need, $limit) = ($o{connections} + 64, _open_files_limit());
        fail(2, "--connections $o{connections} needs about $need file descriptors; the limit is "
              . "$limit (ulimit -n)") if defined $limit && $limit < $need;
    }
    unless ($producer) {
        fail(2, "--ack $o{ack} is unsupported by STOMP (use auto, client or client-individual)")
          unless $o{ack} =~ /^(?:auto|client|client-individual)\z/;
        # ActiveMQ's STOMP commit of individually acked messages re-acks them outside the
        # transaction and the subscription stalls (seen with 6.1.7): not offered.
        fail(2, "--tx-batch with --ack client-individual is unsupported (use client or auto)")
          if $o{'tx-batch'} && $o{ack} eq 'client-individual';
    }
    return \%o;
}

# The soft limit on open files (/proc/self/limits: Linux), undef when unknown or unlimited.
sub _open_files_limit {
    open(my $fh, '<', '/proc/self/limits') or return undef;
    while (<$fh>) { return $1 if /^Max open files\s+(\d+)/ }
    return undef;
}

# --name VALUE / --name=VALUE / --flag from @$argv into %$o; $allowed->{name} is true for an
# option that takes a value, false for a flag. Anything else exits 2 with one line.
sub read_options {
    my ($argv, $allowed, $o) = @_;
    my %seen;
    while (@$argv) {
        my $arg = shift @$argv;
        my ($name, $value);
        if ($arg =~ /^--([a-z][a-z-]*)=(.*)\z/s) { ($name, $value) = ($1, $2) }
        elsif ($arg =~ /^--([a-z][a-z-]*)\z/)   { $name = $1 }
        else { fail(2, "unexpected argument '$arg'") }
        fail(2, "unknown option --$name") unless exists $allowed->{$name};
        fail(2, "option --$name given twice") if $seen{$name}++;
        if ($allowed->{$name}) {
            unless (defined $value) {
                fail(2, "option --$name needs a value") unless @$argv;
                $value = shift @$argv;
            }
            $o->{$name} = $value;
        } else {
            fail(2, "option --$name takes no value") if defined $value;
            $o->{$name} = 1;
        }
    }
}

# stomp[+ssl]://HOST:PORT into (ssl, host, port) (exit 2 naming the option otherwise).
sub _split_url {
    my ($url, $opt) = @_;
    if ($url =~ m{^(stomp|stomp\+ssl)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})/?\z}
        && $3 >= 1 && $3 <= 65535) {
        my ($ssl, $host, $port) = ($1 eq 'stomp+ssl' ? 1 : 0, $2, 0 + $3);
        $host =~ s/^\[(.*)\]\z/$1/;
        return ($ssl, $host, $port);
    }
    fail(2, "$opt must be stomp://HOST:PORT or stomp+ssl://HOST:PORT: '$url'");
}

# --url into ssl, host, port; --failover into the list of Net::Stomp `hosts` (--url first).
sub parse_url {
    my ($o) = @_;
    @$o{qw(ssl host port)} = _split_url($o->{url}, '--url');
    return unless defined $o->{failover};
    my @hosts = ({ hostname => $o->{host}, port => $o->{port}, ssl => $o->{ssl} });
    for my $u (split /,/, $o->{failover}, -1) {
        my ($ssl, $host, $port) = _split_url($u, '--failover');
        fail(2, "--failover addresses must use --url's scheme: '$u'") if $ssl != $o->{ssl};
        push @hosts, { hostname => $host, port => $port, ssl => $ssl };
    }
    $o->{hosts} = \@hosts;
    fail(2, "--failover with --tx-batch is not supported by this client")
      if $o->{'tx-batch'};
}

1;
