#!/usr/bin/env bash
# Puts the local stack's commands on the virtualenv's PATH (bin.sh VENV_BIN): kubectl,
# helm and promtool (links to the pinned builds) and Kafka's own kafka-*.sh (wrappers that run
# kafka-tools' main classes), so `. .venv/bin/activate` gives a newcomer every command
# the README names, at the versions the stack runs. Rewritten on every `make`.
source "$(dirname "$0")/common.sh"
bin="${1:?usage: bin.sh VENV_BIN}"
mkdir -p "$bin"
link() {  # NAME TARGET: only what is built (make demo builds a part of the stack)
  if [ -e "$2" ]; then ln -sfn "$2" "$bin/$1"; else rm -f "$bin/$1"; fi
}
link kubectl "$SEGUE_CACHE/kubernetes-$KUBERNETES_VERSION/bin/kubectl"
link helm "$SEGUE_CACHE/helm-$HELM_VERSION/bin/helm"
link promtool "$SEGUE_CACHE/promtool-$PROMETHEUS_VERSION/bin/promtool"
libs="$SEGUE_CACHE/kafka-tools-$KAFKA_VERSION/libs"
tool() {  # NAME MAIN-CLASS [LIBS]
  cat > "$bin/$1" <<WRAPPER
#!/usr/bin/env bash
# Apache Kafka's $1 ($2), written by stack/install/bin.sh.
exec java -Xmx512m -Dlog4j2.configurationFile='$here/kafka-tools/log4j2.properties' \\
  -cp '${3:-$libs}/*' $2 "\$@"
WRAPPER
  chmod +x "$bin/$1"
}
tool kafka-topics.sh org.apache.kafka.tools.TopicCommand
tool kafka-transactions.sh org.apache.kafka.tools.TransactionsCommand
tool kafka-console-consumer.sh org.apache.kafka.tools.consumer.ConsoleConsumer
tool kafka-console-producer.sh org.apache.kafka.tools.ConsoleProducer
tool kafka-consumer-groups.sh org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
# ConfigCommand (client quotas, dynamic configs) is still in the broker's own jar
tool kafka-configs.sh kafka.admin.ConfigCommand "$SEGUE_CACHE/kafka-$KAFKA_VERSION/libs"
