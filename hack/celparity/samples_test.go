package celparity

import "fmt"

// vars are the inputs every sample may read, shaped as Kubernetes
// objects arrive (unstructured maps, int64 numbers).
var vars = map[string]any{
	"obj": map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"replicas": int64(3), "ports": []any{int64(80), int64(443)}},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Done", "message": "ok"},
		}},
	},
}

const ts = `timestamp('2024-02-29T13:14:15.678Z')`

// samples lists expressions per family: each runs on both sides, and
// together they must choose every overload kro declares.
var samples = map[string][]string{
	"logic and operators": {
		`!true`, `-(1.5 + 1.0)`, `-(1 + 2)`, `-(9223372036854775807 + 0) - 2`,
		`2 in [1, 2]`, `'a' in {'a': 1}`,
		`[1, 2].all(x, x > 0)`, `[1, 2].exists(x, x > 1)`, `1 != 2`,
		`5 % 3`, `5u % 3u`, `5 % 0`, `5u % 0u`, `true && false`, `false || true`,
		`2.0 * 3.5`, `2 * 3`, `2u * 3u`, `9223372036854775807 * 2`,
		`string(b'a' + b'b')`, `1.5 + 1.0`, `1 + 2`, `1u + 2u`, `[1] + [2]`, `'a' + 'b'`,
		`9223372036854775807 + 1`, `18446744073709551615u + 1u`,
		`duration('1s') + duration('2m')`, `duration('1h') + ` + ts, ts + ` + duration('1h')`,
		`2.5 - 1.0`, `duration('1h') - duration('1s')`, ts + ` - duration('25h')`,
		ts + ` - timestamp('2024-01-01T00:00:00Z')`, `5 - 7`, `7u - 5u`, `5u - 7u`,
		`-9223372036854775807 - 2`, `7.0 / 2.0`, `7 / 2`, `7u / 2u`, `1 / 0`, `1u / 0u`, `1.0 / 0.0 > 1.0`,
		`1 == 1`, `true ? 'y' : 'n'`, `[1, 2][1]`, `{'a': 1}['a']`, `[1][5]`, `{'a': 1}['b']`,
		`{'a': 1}.?a.orValue(0)`, `{'a': 1}.?b.orValue(0)`, `[1, 2][?0].value()`, `{'a': 1}[?'a'].value()`,
		`optional.of([1])[?0].value()`, `optional.of({'a': 1})[?'a'].value()`,
		`optional.of([1])[0].value()`, `optional.of({'a': 1})['a'].value()`,
		`type(1) == int`, `dyn(1) + 1`, `cel.bind(x, 2, x * x)`,
		`{'a': 1}.transformMap(k, v, v * 2)`, `[1, 2].transformMapEntry(i, v, {string(v): i})`,
		`[3, 1, 2].sortBy(x, -x)`, `obj.spec.replicas + 1`, `obj.spec.missing`, `obj.metadata.labels.app`,
	},
	"strings": {
		`'abc'.charAt(1)`, `'abc'.charAt(3)`, `'abc'.charAt(4)`, `'abc'.contains('b')`, `'abc'.endsWith('bc')`,
		`'abc'.startsWith('ab')`, `'a,b,c'.indexOf(',')`, `'a,b,c'.indexOf(',', 2)`, `'abc'.indexOf('b', 9)`,
		`'a,b,c'.lastIndexOf(',')`, `'a,b,c'.lastIndexOf(',', 2)`, `'ABc'.lowerAscii()`, `'abC'.upperAscii()`,
		`'aaa'.replace('a', 'b')`, `'aaa'.replace('a', 'b', 2)`, `'abc'.reverse()`, `'a,b,c'.split(',')`,
		`'a,b,c'.split(',', 2)`, `'hello'.substring(1)`, `'hello'.substring(1, 3)`, `'hello'.substring(3, 1)`,
		`'hello'.substring(9)`, `'  x '.trim()`, `strings.quote('a"b')`, `['a', 'b'].join()`, `['a', 'b'].join('-')`,
		`'%d-%s-%.2f'.format([1, 'a', 1.5])`, `'%d'.format(['a'])`, `'abc123def45'.find('[0-9]+')`,
		`'abc123def45'.findAll('[0-9]+')`, `'a1b2c3'.findAll('[0-9]', 2)`, `'abc'.find('(')`,
		`'abc'.matches('^a.c$')`, `matches('abc', 'b')`, `'abc'.matches('(')`,
	},
	"conversions": {
		`bool(true)`, `bool('true')`, `bool('maybe')`, `string(bytes(b'ab'))`, `string(bytes('ab'))`,
		`double(1.5)`, `double(2)`, `double('1e3')`, `double(3u)`, `double('x')`,
		`duration(duration('90m'))`, `duration('1h30m')`, `duration('1x')`, `int(1.9)`, `int(duration('2s'))`,
		`int(` + ts + `)`, `int(7)`, `int('12')`, `int(7u)`, `int('x')`, `int(1e20)`, `int(18446744073709551615u)`,
		`string(true)`, `string(b'hi')`, `string(b'\xff')`, `string(1.25)`, `string(duration('1h'))`, `string(` + ts + `)`,
		`string(7)`, `string(cidr('10.0.0.0/8'))`, `string(ip('::1'))`, `string('s')`, `string(7u)`,
		`timestamp(` + ts + `)`, `timestamp(1700000000)`, `timestamp('2024-01-01T00:00:00+02:00')`, `timestamp('nope')`,
		`uint(1.5)`, `uint(-1)`, `uint(3)`, `uint('3')`, `uint(3u)`, `type(1)`, `dyn({'a': 1})`,
		`{1: 'a'}`, `{true: 'a'}`, `18446744073709551615u`, `9223372036854775807u`, `[ip('1.2.3.4')]`, `{'a': b'x'}`,
	},
	"timestamps and durations": {
		ts + `.getDate()`, ts + `.getDate('America/New_York')`, ts + `.getDayOfMonth()`, ts + `.getDayOfMonth('+05:30')`,
		ts + `.getDayOfWeek()`, ts + `.getDayOfWeek('Asia/Tokyo')`, ts + `.getDayOfYear()`, ts + `.getDayOfYear('UTC')`,
		ts + `.getFullYear()`, ts + `.getFullYear('Europe/Paris')`, ts + `.getHours()`, ts + `.getHours('-08:00')`,
		ts + `.getMilliseconds()`, ts + `.getMilliseconds('UTC')`, ts + `.getMinutes()`, ts + `.getMinutes('+05:45')`,
		ts + `.getMonth()`, ts + `.getMonth('UTC')`, ts + `.getSeconds()`, ts + `.getSeconds('UTC')`, ts + `.getHours('Nowhere/City')`,
		`duration('3h25m7.5s').getHours()`, `duration('3h25m7.5s').getMilliseconds()`,
		`duration('3h25m7.5s').getMinutes()`, `duration('3h25m7.5s').getSeconds()`, ts, `duration('5400s')`,
		`timestamp('9999-12-31T23:59:59Z') + duration('1s')`,
	},
	"lists": {
		`[1, 1, 2].distinct()`, `[1, 2].first()`, `[].first()`, `[1, 2].last()`, `[[1], [2, 3]].flatten()`,
		`[[1, [2, [3]]]].flatten(2)`, `[[1]].flatten(-1)`, `[1, 2, 1].indexOf(1)`, `[1, 2, 1].lastIndexOf(1)`,
		`lists.range(3)`, `[3, 1].reverse()`, `[1, 2, 3].slice(1, 3)`, `[1, 2, 3].slice(2, 1)`, `[1, 2, 3].slice(1, 9)`,
		`size([1, 2])`, `[1, 2].size()`, `size({'a': 1})`, `{'a': 1}.size()`, `size('héllo')`, `'héllo'.size()`,
		`size(b'ab')`, `b'ab'.size()`, `[].min()`, `[].max()`, `[].sum()`,
		`lists.setAtIndex([1, 2, 3], 1, 9)`, `lists.setAtIndex([1, 2, 3], 3, 9)`, `lists.setAtIndex([1, 2], -1, 9)`,
		`lists.insertAtIndex([1, 2], 0, 9)`, `lists.insertAtIndex([1, 2], 2, 9)`, `lists.insertAtIndex([1, 2], 3, 9)`,
		`lists.insertAtIndex([], 0, 'a')`, `lists.removeAtIndex([1, 2, 3], 1)`, `lists.removeAtIndex([1], 1)`,
		`lists.removeAtIndex([], 0)`, `lists.range(1500).map(i, lists.range(1500).size()).size()`, `lists.setAtIndex(obj.spec.ports, 0, 8080)`, `lists.insertAtIndex(obj.spec.ports, -1, 1)`,
	},
	"maps": {
		`{'a': 1, 'b': 2}.merge({'b': 3, 'c': 4})`, `{'a': {'x': 1}}.merge({'a': {'y': 2}})`, `{}.merge({'a': 1})`,
		`{'a': {'x': 1, 'l': [1]}, 'k': 1}.deepMerge({'a': {'y': 2, 'l': [2]}, 'k': {'z': 1}})`,
		`{}.deepMerge({'a': 1})`, `{'a': 1}.deepMerge({})`, `obj.metadata.deepMerge({'labels': {'tier': 'db'}})`,
		`{'a': 1}.deepMerge(dyn([1]))`, `dyn('x').deepMerge({'a': 1})`, `obj.metadata.labels.merge({'x': 'y'})`,
	},
	"json": {
		`json.marshal({'b': [1, 2.5, true, null], 'a': 'x'})`, `json.marshal(b'hi')`, `json.marshal(duration('1h'))`,
		`json.marshal(` + ts + `)`, `json.marshal(18446744073709551615u)`, `json.marshal({1: 2})`,
		`json.marshal(optional.none())`, `json.marshal(optional.of(1))`, `json.marshal(quantity('1Gi'))`,
		`json.marshal(obj)`, `json.marshal(1.0 / 0.0)`, `json.marshal(type(1))`, `json.unmarshal('{"a": [1, 2.5, "x", null, true]}')`,
		`json.unmarshal('{"a": 1}').a + 1.0`, `json.unmarshal('nope')`, `json.unmarshal('')`, `json.unmarshal('"s"')`,
		`json.encode({'a': 1})`,
	},
	"hash and base64": {
		`base64.encode(hash.sha256('kro'))`, `base64.encode(hash.md5('kro'))`, `base64.encode(hash.fnv64a('kro'))`,
		`base64.encode(hash.sha256(''))`, `hash.sha256('kro')`, `base64.encode(b'hello')`,
		`string(base64.decode('aGVsbG8='))`, `string(base64.decode('aGVsbG8'))`, `base64.decode('!!')`,
	},
	"random": {
		`random.seededString(10, 'test-seed')`, `random.seededString(40, 'x')`, `random.seededString(0, 'x')`,
		`random.seededString(-1, 'x')`, `random.seededInt(0, 100, 'seed')`, `random.seededInt(-5, 5, 'seed')`,
		`random.seededInt(5, 5, 'seed')`, `random.seededInt(-9223372036854775808, 9223372036854775807, 's')`,
		`random.seededString(obj.spec.replicas, obj.metadata.name)`, `random.seededString(4194304, 'x').size()`,
	},
	"optional": {
		`optional.none().hasValue()`, `optional.of(1).hasValue()`, `optional.ofNonZeroValue(0).hasValue()`,
		`optional.ofNonZeroValue('a').value()`, `optional.unwrap([optional.of(1), optional.none()])`,
		`[optional.of(1), optional.none()].unwrapOpt()`, `optional.none().or(optional.of(2)).value()`,
		`optional.none().orValue(3)`, `optional.none().value()`, `optional.none()`, `optional.of('x')`,
	},
	"quantity": {
		`quantity('1Gi').add(1).asInteger()`, `quantity('1Gi').add(quantity('512Mi')).asInteger()`,
		`quantity('1.5').asApproximateFloat()`, `quantity('1Gi').asInteger()`, `quantity('1.5').asInteger()`,
		`quantity('100E').asInteger()`, `quantity('1Gi').compareTo(quantity('1G'))`, `quantity('2').isGreaterThan(quantity('1'))`,
		`quantity('2').isLessThan(quantity('1'))`, `quantity('1.5').isInteger()`, `isQuantity('1Gi')`, `isQuantity('x')`,
		`sign(quantity('-3'))`, `quantity('-3').sign()`, `quantity('3').sub(1).asInteger()`, `quantity('3').sub(quantity('5')).asInteger()`,
		`quantity('x')`, `quantity('1Gi')`, `quantity('500m') == quantity('0.5')`,
	},
	"url": {
		`url('https://u@example.com:8443/a%20b/c?x=1&x=2&y=3#f').getEscapedPath()`, `url('https://example.com:8443/p').getHost()`,
		`url('https://[::1]:80/p').getHostname()`, `url('https://example.com:8443/p').getPort()`,
		`url('https://example.com/p?x=1&x=2&y=3').getQuery()`, `url('https://example.com/p').getScheme()`,
		`isURL('https://example.com')`, `isURL('not a url')`, `url('not a url')`, `url('https://example.com/p')`,
	},
	"ip and cidr": {
		`cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16'))`, `cidr('10.0.0.0/8').containsCIDR('11.0.0.0/16')`,
		`cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))`, `cidr('10.0.0.0/8').containsIP('192.168.0.1')`,
		`ip('10.0.0.1').family()`, `ip('::1').family()`, `string(cidr('10.1.2.3/8').ip())`, `ip.isCanonical('2001:db8::1')`,
		`ip.isCanonical('2001:DB8::1')`, `isCIDR('10.0.0.0/8')`, `isCIDR('10.0.0.0/33')`, `isIP('1.2.3.4')`, `isIP('1.2.3')`,
		`ip('8.8.8.8').isGlobalUnicast()`, `ip('ff02::1').isLinkLocalMulticast()`, `ip('fe80::1').isLinkLocalUnicast()`,
		`ip('127.0.0.1').isLoopback()`, `ip('0.0.0.0').isUnspecified()`, `string(cidr('10.1.2.3/8').masked())`,
		`cidr('10.0.0.0/8').prefixLength()`, `ip('nope')`, `cidr('nope')`, `ip('10.0.0.1')`, `cidr('10.0.0.0/8')`,
		`ip('10.0.0.1') == ip('10.0.0.1')`, `ip('1.2.3.4%eth0')`,
	},
	"semver": {
		`semver('1.2.3').compareTo(semver('1.3.0'))`, `semver('1.2.3').isGreaterThan(semver('1.2.0'))`,
		`semver('1.2.3').isLessThan(semver('1.2.0'))`, `semver('1.2.3').major()`, `semver('1.2.3').minor()`,
		`semver('1.2.3').patch()`, `isSemver('1.2.3')`, `isSemver('v1.2')`, `semver('bad')`, `semver('1.2.3')`,
		`semver('1.2.3-rc.1') == semver('1.2.3-rc.1')`,
	},
	"runtime": {
		`runtime.newCondition({type: 'Ready', status: 'True', reason: 'R', message: 'm'}).status`,
		`runtime.newCondition({type: 'Ready', status: 'True'}).reason`,
		`runtime.newCondition({type: 'Ready', status: 'Maybe'}).status`,
		`runtime.newCondition({type: '', status: 'True'}).type`,
		`runtime.newCondition({status: 'True'}).status`,
		`runtime.newCondition({type: 'A', status: 'True', colour: 'red'}).type`,
		`runtime.condition(obj, 'Ready').status`, `runtime.condition(obj, 'Ready').message`,
		`runtime.condition(obj, 'Missing').status`, `runtime.condition({}, 'Ready').status`,
		`runtime.condition(1, 'Ready').status`, `runtime.newCondition({type: 'A', status: 'True'})`,
		`runtime.newCondition({type: 'A', status: 'True'}) == runtime.newCondition({type: 'A', status: 'True'})`,
	},
	"omit": {
		`omit()`, `[1, omit()]`, `{'a': omit()}`, `omit() == 1`, `1 == omit()`, `omit() != omit()`, `string(omit())`, `type(omit()) == type(omit())`,
	},
}

// dynOnly maps the overloads only a dyn value reaches (mixed numeric
// comparisons, which the checker does not offer) to their sample.
var dynOnly = map[string]string{}

// typed are sample values of the types CEL orders, sorts and sums, so
// every per-type overload gets a sample.
var typed = map[string][2]string{
	"bool":      {`false`, `true`},
	"bytes":     {`b'a'`, `b'b'`},
	"double":    {`1.5`, `2.5`},
	"duration":  {`duration('1s')`, `duration('2s')`},
	"timestamp": {`timestamp('2024-01-01T00:00:00Z')`, `timestamp('2024-01-02T00:00:00Z')`},
	"int":       {`1`, `2`},
	"string":    {`'a'`, `'b'`},
	"uint":      {`1u`, `2u`},
}

func init() {
	var gen []string
	for _, op := range []string{"<", "<=", ">", ">="} {
		for _, v := range typed {
			gen = append(gen, v[0]+" "+op+" "+v[1], v[1]+" "+op+" "+v[1])
		}
		for _, p := range [][2]string{{"1.5", "2"}, {"1.5", "2u"}, {"2", "1.5"}, {"2", "3u"}, {"3u", "2.5"}, {"3u", "-1"}} {
			gen = append(gen, p[0]+" "+op+" "+p[1])
		}
	}
	for name, v := range typed {
		list := fmt.Sprintf("[%s, %s, %s]", v[1], v[0], v[1])
		gen = append(gen, list+".isSorted()", list+".sort()", list+".sortBy(x, x)",
			fmt.Sprintf("[1, 2, 3].sortBy(i, [%s, %s, %s][i - 1])", v[1], v[0], v[1]))
		if name != "bytes" {
			gen = append(gen, list+".min()", list+".max()")
		} else {
			gen = append(gen, "size("+list+".min())", "size("+list+".max())")
		}
		if name == "int" || name == "uint" || name == "double" || name == "duration" {
			gen = append(gen, list+".sum()")
		}
	}
	gen = append(gen, `[9223372036854775807, 1].sum()`)
	// Mixed int, uint and double comparisons do not type-check; kro
	// reaches them through dyn values, such as an untyped resource's fields.
	opIDs := map[string]string{"<": "less", "<=": "less_equals", ">": "greater", ">=": "greater_equals"}
	for op, opID := range opIDs {
		for _, p := range [][3]string{{"double_int64", "1.5", "2"}, {"double_uint64", "2.5", "2u"},
			{"int64_double", "2", "1.5"}, {"int64_uint64", "-1", "3u"}, {"uint64_double", "3u", "2.5"}, {"uint64_int64", "3u", "-1"}} {
			src := "dyn(" + p[1] + ") " + op + " " + p[2]
			gen = append(gen, src)
			dynOnly[opID+"_"+p[0]] = src
		}
	}
	samples["generated: ordering, sort, min, max, sum"] = gen
}
