const { text } = JSON.parse(process.argv[2] ?? "{}");
const words = String(text).split(/\s+/).filter(Boolean).length;
console.log(JSON.stringify({ status: "ok", result: `${words} words` }));
